/* The lines of a text, each with invisible characters removed and its spaces squeezed: the compiled form of
 * neurips26.corpora.locus.formats.lines.split_lines_py (see that module; a test checks that both agree).
 *
 *   split_lines(text) -> (lines, joined, ends, starts)
 *     lines  == [" ".join(INVISIBLE.sub("", line).split()) for line in text.splitlines()]
 *     joined == "\n" + "\n".join(lines)
 *     ends   == bytes of native int64: where each line ends in text, after its line break
 *               (itertools.accumulate(map(len, text.splitlines(keepends=True))))
 *     starts == bytes of native int64: where each line starts in joined (joined[starts[i] - 1] is its "\n")
 *
 * Line breaks are those of str.splitlines (\r\n counts once), spaces those of str.split (Py_UNICODE_ISSPACE),
 * invisible characters those of lines.INVISIBLE_CHARS. One pass over the text: each line is squeezed into the
 * joined text's buffer, and made a str from there.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

/* What a character is to the normaliser. */
enum { REGULAR = 0, SPACE = 1, INVISIBLE = 2, BREAK = 3 };

static unsigned char latin1_class[256];  /* the class of U+0000..U+00FF, filled at import from the rules below */

static inline int
classify(Py_UCS4 c)
{
    /* line breaks of str.splitlines; invisible characters of lines.INVISIBLE_CHARS (removed before the spaces
     * are squeezed, so \x1f, also a space to str.split, is invisible); spaces of str.split */
    switch (c) {
    case 0x0a: case 0x0b: case 0x0c: case 0x0d: case 0x1c: case 0x1d: case 0x1e:
    case 0x85: case 0x2028: case 0x2029:
        return BREAK;
    default:
        break;
    }
    if (c < 0x09 || (c >= 0x0e && c < 0x20) || c == 0x7f || c == 0x200b || c == 0xfeff || c == 0xfffe)
        return INVISIBLE;
    return Py_UNICODE_ISSPACE(c) ? SPACE : REGULAR;
}

/* A str of the n code units at `data` (of kind CHAR) in the narrowest kind that holds them (str's canonical form),
 * given `bound`, the OR of its characters other than spaces: its highest bit is that of their maximum, which is
 * all PyUnicode_New looks at (a space, 0x20, never decides the kind). */
#define DEFINE_MAKE_STR(NAME, CHAR)                                                                          \
static PyObject *                                                                                            \
NAME(const CHAR *data, Py_ssize_t n, Py_UCS4 bound)                                                          \
{                                                                                                            \
    PyObject *s = PyUnicode_New(n, bound > 0x10ffff ? 0x10ffff : bound);                                     \
    if (s == NULL)                                                                                           \
        return NULL;                                                                                         \
    int kind = PyUnicode_KIND(s);                                                                            \
    void *to = PyUnicode_DATA(s);                                                                            \
    if (kind == (int)sizeof(CHAR))                                                                           \
        memcpy(to, data, n * sizeof(CHAR));                                                                  \
    else if (kind == PyUnicode_1BYTE_KIND)                                                                   \
        for (Py_ssize_t k = 0; k < n; k++)                                                                   \
            ((Py_UCS1 *)to)[k] = (Py_UCS1)data[k];                                                           \
    else                                                                                                     \
        for (Py_ssize_t k = 0; k < n; k++)                                                                   \
            ((Py_UCS2 *)to)[k] = (Py_UCS2)data[k];                                                           \
    return s;                                                                                                \
}

DEFINE_MAKE_STR(make_str_ucs1, Py_UCS1)
DEFINE_MAKE_STR(make_str_ucs2, Py_UCS2)
DEFINE_MAKE_STR(make_str_ucs4, Py_UCS4)

/* What split_lines returns, for one string kind (Py_UCS1, Py_UCS2 or Py_UCS4 code units). Each line is squeezed
 * into the joined text's buffer without a branch per character (a pending space is written, and kept only when
 * a character follows it), and made a str from there. */
#define DEFINE_SPLIT(NAME, CHAR, MAKE_STR)                                                                   \
static PyObject *                                                                                            \
NAME(const CHAR *text, Py_ssize_t length)                                                                    \
{                                                                                                            \
    PyObject *lines = PyList_New(0), *result = NULL;                                                         \
    CHAR *joined = PyMem_Malloc((length + 2) * sizeof(CHAR));                                                \
    Py_ssize_t n_lines = 0, ends_capacity = 1024;                                                            \
    int64_t *ends = PyMem_Malloc(ends_capacity * sizeof(int64_t));                                           \
    int64_t *starts = PyMem_Malloc(ends_capacity * sizeof(int64_t));                                         \
    Py_UCS4 joined_bound = '\n';                                                                             \
    if (lines == NULL || joined == NULL || ends == NULL || starts == NULL) {                                 \
        PyErr_NoMemory();                                                                                    \
        goto done;                                                                                           \
    }                                                                                                        \
    joined[0] = '\n';                                                                                        \
    Py_ssize_t at = 1;  /* where the next line goes in joined */                                             \
    Py_ssize_t i = 0;                                                                                        \
    while (i < length) {                                                                                     \
        Py_ssize_t n = 0, line_start = at;                                                                   \
        CHAR *out = joined + at;                                                                             \
        Py_UCS4 c = 0, bound = 0;                                                                            \
        int space = 0;                                                                                       \
        for (; i < length; i++) {                                                                            \
            c = text[i];                                                                                     \
            int class = c < 0x100 ? latin1_class[c] : classify(c);                                           \
            if (class == BREAK)                                                                              \
                break;                                                                                       \
            int regular = class == REGULAR;                                                                  \
            out[n] = ' ';  /* a pending space, kept when this character is kept and the line has begun */    \
            n += regular & space & (n > 0);                                                                  \
            out[n] = (CHAR)c;                                                                                \
            n += regular;                                                                                    \
            bound |= c & (Py_UCS4)-regular;                                                                  \
            space = (space | (class == SPACE)) & !regular;                                                   \
        }                                                                                                    \
        PyObject *line = MAKE_STR(out, n, bound);                                                            \
        if (line == NULL || PyList_Append(lines, line) < 0) {                                                \
            Py_XDECREF(line);                                                                                \
            goto done;                                                                                       \
        }                                                                                                    \
        Py_DECREF(line);                                                                                     \
        joined_bound |= bound;                                                                               \
        at += n;                                                                                             \
        if (i < length) {  /* at a line break (\r\n is one); the next line, if any, follows a "\n" */        \
            i += (c == 0x0d && i + 1 < length && text[i + 1] == 0x0a) ? 2 : 1;                              \
            if (i < length)                                                                                  \
                joined[at++] = '\n';                                                                         \
        }                                                                                                    \
        if (n_lines == ends_capacity) {                                                                      \
            ends_capacity *= 2;                                                                              \
            int64_t *grown = PyMem_Realloc(ends, ends_capacity * sizeof(int64_t));                           \
            if (grown != NULL)                                                                               \
                ends = grown;                                                                                \
            int64_t *grown_starts = PyMem_Realloc(starts, ends_capacity * sizeof(int64_t));                  \
            if (grown_starts != NULL)                                                                        \
                starts = grown_starts;                                                                       \
            if (grown == NULL || grown_starts == NULL) {                                                     \
                PyErr_NoMemory();                                                                            \
                goto done;                                                                                   \
            }                                                                                                \
        }                                                                                                    \
        starts[n_lines] = line_start;                                                                        \
        ends[n_lines++] = i;                                                                                 \
    }                                                                                                        \
    PyObject *joined_str = MAKE_STR(joined, at, joined_bound);                                               \
    PyObject *ends_bytes = PyBytes_FromStringAndSize((const char *)ends, n_lines * sizeof(int64_t));         \
    PyObject *starts_bytes = PyBytes_FromStringAndSize((const char *)starts, n_lines * sizeof(int64_t));     \
    if (joined_str != NULL && ends_bytes != NULL && starts_bytes != NULL)                                    \
        result = PyTuple_Pack(4, lines, joined_str, ends_bytes, starts_bytes);                               \
    Py_XDECREF(joined_str);                                                                                  \
    Py_XDECREF(ends_bytes);                                                                                  \
    Py_XDECREF(starts_bytes);                                                                                \
done:                                                                                                        \
    Py_XDECREF(lines);                                                                                       \
    PyMem_Free(joined);                                                                                      \
    PyMem_Free(ends);                                                                                        \
    PyMem_Free(starts);                                                                                      \
    return result;                                                                                           \
}

DEFINE_SPLIT(split_ucs1, Py_UCS1, make_str_ucs1)
DEFINE_SPLIT(split_ucs2, Py_UCS2, make_str_ucs2)
DEFINE_SPLIT(split_ucs4, Py_UCS4, make_str_ucs4)

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
     "split_lines(text) -> (lines, joined, ends, starts): the lines of text (str.splitlines), each with invisible "
     "characters removed and runs of spaces as one space, stripped; \"\\n\" + \"\\n\".join(lines); and where "
     "each line ends in text, after its line break, and where each starts in joined (native int64)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_lines", NULL, 0, methods};

PyMODINIT_FUNC
PyInit__lines(void)
{
    for (Py_UCS4 c = 0; c < 256; c++)
        latin1_class[c] = (unsigned char)classify(c);
    return PyModule_Create(&module);
}
