/* The lines of a text, each with invisible characters removed and its spaces squeezed: the compiled form of
 * neurips26.corpora.locus.formats.lines.normalized_lines_py (see that module; a test checks that both agree).
 *
 *   normalized_lines(text) == [" ".join(INVISIBLE.sub("", line).split()) for line in text.splitlines()]
 *
 * Line breaks are those of str.splitlines (\r\n counts once), spaces those of str.split (Py_UNICODE_ISSPACE),
 * invisible characters those of lines.INVISIBLE_CHARS. One pass over the text; each line is written once.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

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

/* The lines of one string kind (Py_UCS1, Py_UCS2 or Py_UCS4 code units), appended to `lines`; 0 or -1. Each
 * line is squeezed into `buffer` (the input's own code units) and made a str by PyUnicode_FromKindAndData,
 * which narrows it where the line allows. */
#define DEFINE_LINES(NAME, CHAR, KIND)                                                                        \
static int                                                                                                   \
NAME(const CHAR *text, Py_ssize_t length, PyObject *lines)                                                   \
{                                                                                                            \
    CHAR *buffer = PyMem_Malloc((length ? length : 1) * sizeof(CHAR));                                       \
    if (buffer == NULL) {                                                                                    \
        PyErr_NoMemory();                                                                                    \
        return -1;                                                                                           \
    }                                                                                                        \
    Py_ssize_t i = 0;                                                                                        \
    while (i < length) {                                                                                     \
        Py_ssize_t n = 0;                                                                                    \
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
                buffer[n++] = ' ';                                                                           \
            space = 0;                                                                                       \
            buffer[n++] = (CHAR)c;                                                                           \
        }                                                                                                    \
        PyObject *line = PyUnicode_FromKindAndData(KIND, buffer, n);                                         \
        if (line == NULL || PyList_Append(lines, line) < 0) {                                                \
            Py_XDECREF(line);                                                                                \
            PyMem_Free(buffer);                                                                              \
            return -1;                                                                                       \
        }                                                                                                    \
        Py_DECREF(line);                                                                                     \
        if (i < length) {  /* at a line break: \r\n is one */                                               \
            i += (c == 0x0d && i + 1 < length && text[i + 1] == 0x0a) ? 2 : 1;                              \
        }                                                                                                    \
    }                                                                                                        \
    PyMem_Free(buffer);                                                                                      \
    return 0;                                                                                                \
}

DEFINE_LINES(lines_ucs1, Py_UCS1, PyUnicode_1BYTE_KIND)
DEFINE_LINES(lines_ucs2, Py_UCS2, PyUnicode_2BYTE_KIND)
DEFINE_LINES(lines_ucs4, Py_UCS4, PyUnicode_4BYTE_KIND)

static PyObject *
normalized_lines(PyObject *module, PyObject *text)
{
    if (!PyUnicode_Check(text)) {
        PyErr_Format(PyExc_TypeError, "normalized_lines() expects str, not %.100s", Py_TYPE(text)->tp_name);
        return NULL;
    }
    PyObject *lines = PyList_New(0);
    if (lines == NULL)
        return NULL;
    Py_ssize_t length = PyUnicode_GET_LENGTH(text);
    const void *data = PyUnicode_DATA(text);
    int failed;
    switch (PyUnicode_KIND(text)) {
    case PyUnicode_1BYTE_KIND:
        failed = lines_ucs1(data, length, lines);
        break;
    case PyUnicode_2BYTE_KIND:
        failed = lines_ucs2(data, length, lines);
        break;
    default:
        failed = lines_ucs4(data, length, lines);
    }
    if (failed) {
        Py_DECREF(lines);
        return NULL;
    }
    return lines;
}

static PyMethodDef methods[] = {
    {"normalized_lines", normalized_lines, METH_O,
     "normalized_lines(text) -> list[str]: each line of text (str.splitlines) with invisible characters removed "
     "and runs of spaces as one space, stripped."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_lines", NULL, 0, methods};

PyMODINIT_FUNC
PyInit__lines(void)
{
    return PyModule_Create(&module);
}
