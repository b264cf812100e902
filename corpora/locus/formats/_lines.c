/* The lines of a text, each with invisible characters removed and its spaces squeezed: the compiled form of
 * neurips26.corpora.locus.formats.lines.split_lines_py (see that module; a test checks that both agree).
 *
 *   split_lines(text) -> (lines, joined, ends)
 *     lines  == [" ".join(INVISIBLE.sub("", line).split()) for line in text.splitlines()]
 *     joined == "\n" + "\n".join(lines)
 *     ends   == bytes of native int64: where each line ends in text, after its line break
 *               (itertools.accumulate(map(len, text.splitlines(keepends=True))))
 *
 * Line breaks are those of str.splitlines (\r\n counts once), spaces those of str.split (Py_UNICODE_ISSPACE),
 * invisible characters those of lines.INVISIBLE_CHARS. One pass over the text: each line is squeezed into the
 * joined text's buffer, and made a str from there.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

static inline int
is_line_break(Py_UCS4 c)
{
    switch (c) {
    case 0x0a: case 0x0b: case 0x0c: case 0x0d: case 0x1c: case 0x1d: case 0x1e:
    case 0x85: case 0x2028: case 0x2029:
        return 1;
    default:
        return 0;
    }
}

static inline int
is_invisible(Py_UCS4 c)
{
    /* keep in step with lines.INVISIBLE_CHARS */
    return c < 0x09 || (c >= 0x0e && c < 0x20) || c == 0x7f || c == 0x200b || c == 0xfeff || c == 0xfffe;
}

/* What split_lines returns, for one string kind (Py_UCS1, Py_UCS2 or Py_UCS4 code units). `joined` holds the
 * input's own code units; PyUnicode_FromKindAndData narrows each str where its characters allow. */
#define DEFINE_SPLIT(NAME, CHAR, KIND)                                                                        \
static PyObject *                                                                                            \
NAME(const CHAR *text, Py_ssize_t length)                                                                    \
{                                                                                                            \
    PyObject *lines = PyList_New(0), *result = NULL;                                                         \
    CHAR *joined = PyMem_Malloc((length + 1) * sizeof(CHAR));                                                \
    Py_ssize_t n_lines = 0, ends_capacity = 1024;                                                            \
    int64_t *ends = PyMem_Malloc(ends_capacity * sizeof(int64_t));                                           \
    if (lines == NULL || joined == NULL || ends == NULL) {                                                   \
        PyErr_NoMemory();                                                                                    \
        goto done;                                                                                           \
    }                                                                                                        \
    joined[0] = '\n';                                                                                        \
    Py_ssize_t at = 1;  /* where the next line goes in joined */                                             \
    Py_ssize_t i = 0;                                                                                        \
    while (i < length) {                                                                                     \
        Py_ssize_t n = 0;                                                                                    \
        CHAR *out = joined + at;                                                                             \
        int space = 0;                                                                                       \
        Py_UCS4 c = 0;                                                                                       \
        for (; i < length; i++) {                                                                            \
            c = text[i];                                                                                     \
            if (c < 0x80) {  /* the common case: ASCII, decided without the Unicode tables */                \
                if (c >= 0x20 && c != 0x7f) {                                                                \
                    if (c == ' ') {                                                                          \
                        space = 1;                                                                           \
                        continue;                                                                            \
                    }                                                                                        \
                }                                                                                            \
                else if (c == '\t') {                                                                        \
                    space = 1;                                                                               \
                    continue;                                                                                \
                }                                                                                            \
                else if (is_line_break(c))                                                                   \
                    break;                                                                                   \
                else                                                                                         \
                    continue;  /* invisible (0x1f too: str.split takes it for a space, but it goes first) */ \
            }                                                                                                \
            else if (is_line_break(c))                                                                       \
                break;                                                                                       \
            else if (is_invisible(c))                                                                        \
                continue;                                                                                    \
            else if (Py_UNICODE_ISSPACE(c)) {                                                                \
                space = 1;                                                                                   \
                continue;                                                                                    \
            }                                                                                                \
            if (space && n)                                                                                  \
                out[n++] = ' ';                                                                              \
            space = 0;                                                                                       \
            out[n++] = (CHAR)c;                                                                              \
        }                                                                                                    \
        PyObject *line = PyUnicode_FromKindAndData(KIND, out, n);                                            \
        if (line == NULL || PyList_Append(lines, line) < 0) {                                                \
            Py_XDECREF(line);                                                                                \
            goto done;                                                                                       \
        }                                                                                                    \
        Py_DECREF(line);                                                                                     \
        at += n;                                                                                             \
        if (i < length) {  /* at a line break (\r\n is one); the next line, if any, follows a "\n" */        \
            i += (c == 0x0d && i + 1 < length && text[i + 1] == 0x0a) ? 2 : 1;                              \
            if (i < length)                                                                                  \
                joined[at++] = '\n';                                                                         \
        }                                                                                                    \
        if (n_lines == ends_capacity) {                                                                      \
            ends_capacity *= 2;                                                                              \
            int64_t *grown = PyMem_Realloc(ends, ends_capacity * sizeof(int64_t));                           \
            if (grown == NULL) {                                                                             \
                PyErr_NoMemory();                                                                            \
                goto done;                                                                                   \
            }                                                                                                \
            ends = grown;                                                                                    \
        }                                                                                                    \
        ends[n_lines++] = i;                                                                                 \
    }                                                                                                        \
    PyObject *joined_str = PyUnicode_FromKindAndData(KIND, joined, at);                                        \
    PyObject *ends_bytes = PyBytes_FromStringAndSize((const char *)ends, n_lines * sizeof(int64_t));         \
    if (joined_str != NULL && ends_bytes != NULL)                                                            \
        result = PyTuple_Pack(3, lines, joined_str, ends_bytes);                                             \
    Py_XDECREF(joined_str);                                                                                  \
    Py_XDECREF(ends_bytes);                                                                                  \
done:                                                                                                        \
    Py_XDECREF(lines);                                                                                       \
    PyMem_Free(joined);                                                                                      \
    PyMem_Free(ends);                                                                                        \
    return result;                                                                                           \
}

DEFINE_SPLIT(split_ucs1, Py_UCS1, PyUnicode_1BYTE_KIND)
DEFINE_SPLIT(split_ucs2, Py_UCS2, PyUnicode_2BYTE_KIND)
DEFINE_SPLIT(split_ucs4, Py_UCS4, PyUnicode_4BYTE_KIND)

static PyObject *
split_lines(PyObject *module, PyObject *text)
{
    if (!PyUnicode_Check(text)) {
        PyErr_Format(PyExc_TypeError, "split_lines() expects str, not %.100s", Py_TYPE(text)->tp_name);
        return NULL;
    }
    Py_ssize_t length = PyUnicode_GET_LENGTH(text);
    const void *data = PyUnicode_DATA(text);
    switch (PyUnicode_KIND(text)) {
    case PyUnicode_1BYTE_KIND:
        return split_ucs1(data, length);
    case PyUnicode_2BYTE_KIND:
        return split_ucs2(data, length);
    default:
        return split_ucs4(data, length);
    }
}

static PyMethodDef methods[] = {
    {"split_lines", split_lines, METH_O,
     "split_lines(text) -> (lines, joined, ends): the lines of text (str.splitlines), each with invisible "
     "characters removed and runs of spaces as one space, stripped; \"\\n\" + \"\\n\".join(lines); and where "
     "each line ends in text, after its line break (native int64)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_lines", NULL, 0, methods};

PyMODINIT_FUNC
PyInit__lines(void)
{
    return PyModule_Create(&module);
}
