/* goldeval.metrics._locate: the dict reader of goldeval.metrics.judge in C (issue 23).
 *
 * `judge.judge_scores` needs, for every judgment of every question, its value and, for the judgments
 * it locates (value >= floor), the score of that id in the question's run dict and how many scores of
 * that dict are above it and equal to it (itself included). judge.py computes the same with C-level
 * map/chain/np.fromiter over the dicts (`_read_python`), about 2.5 bare Python walks over the dicts when
 * each id is its own str; here each list is read once, its judged ids looked up in it, and the counts made
 * while its scores are still in the caches: about one walk. Nothing is decided here that judge.py does not
 * decide the same way: the rank rule's tie-break by id stays in judge.py (`tied` > 1), and anything this
 * reader does not take exactly as numpy would (a score or judgment that is not a float, numpy's float64 or
 * an int, a judged id that is not a str, a list that is not a dict) sends the whole call back to the Python
 * reader, which tests/test_metrics_locate.py holds equal to this one.
 *
 * Only CPython's public API is used, not the stable ABI: its float reads through a function call, 7% of this
 * reader's time (issue 23), where the public API's PyFloat_AS_DOUBLE reads the value in place. So a wheel is
 * built per CPython version.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#define NOT_MINE (-2) /* the Python reader must do this call */
#define DONE (-1)     /* every question read, no NaN score in a list read */
#define SORT_ABOVE 16 /* located ids in one list beyond which its scores are sorted once */

/* A number exactly as np.fromiter(..., np.float64) reads it (numpy takes float(value)), or NOT_MINE for any
 * other object, or where float() fails (the Python reader then fails as numpy does). A float subclass defined
 * in C (numpy's float64) is read by float(), its C code; one defined in Python (a heap type) could run code of
 * its own there, while this reader holds borrowed references: it goes to the Python reader. */
static int other_number(PyObject *value, double *out);

static inline int as_double(PyObject *value, double *out) {
    if (PyFloat_CheckExact(value)) {
        *out = PyFloat_AS_DOUBLE(value);
        return 0;
    }
    return other_number(value, out);
}

static int other_number(PyObject *value, double *out) {
    if (PyFloat_Check(value)) {
        if (PyType_HasFeature(Py_TYPE(value), Py_TPFLAGS_HEAPTYPE))
            return NOT_MINE;
        PyObject *exact = PyNumber_Float(value);
        if (!exact) {
            PyErr_Clear();
            return NOT_MINE;
        }
        *out = PyFloat_AS_DOUBLE(exact);
        Py_DECREF(exact);
        return 0;
    }
    if (PyLong_Check(value)) {
        *out = PyLong_AsDouble(value); /* correctly rounded, as numpy converts an int */
        if (*out == -1.0 && PyErr_Occurred()) {
            PyErr_Clear(); /* too large for a double: numpy's own error, from the Python reader */
            return NOT_MINE;
        }
        return 0;
    }
    return NOT_MINE;
}

static int compare_doubles(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* First index of sorted[0..n) whose value is > s (strict) or >= s. */
static Py_ssize_t bound(const double *sorted, Py_ssize_t n, double s, int strict) {
    Py_ssize_t lo = 0, hi = n;
    while (lo < hi) {
        Py_ssize_t mid = lo + (hi - lo) / 2;
        if (strict ? sorted[mid] <= s : sorted[mid] < s)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static PyObject *dict_values; /* dict.values, looked up once (by name for each dict: 0.1 us a list) */

#define BATCH 32 /* questions read a stage at a time: their look-ups' cache misses overlap */
#define BATCH_CELLS (1 << 16) /* and at most this many scores a batch (512 KiB), unless one list has more */

typedef struct {
    double *scores;     /* the batch's lists' scores, one after the other */
    PyObject **ids;     /* the batch's judged ids to locate (borrowed: no code of the user's runs in a batch) */
    Py_ssize_t *cell;   /* where each one's cells are */
    int *list;          /* and its question, within the batch */
    Py_ssize_t cap, id_cap;
} Scratch;

static int reserve(Scratch *scratch, Py_ssize_t n, Py_ssize_t ids) {
    if (n > scratch->cap) {
        double *grown = PyMem_Realloc(scratch->scores, (size_t)n * sizeof(double));
        if (!grown)
            goto no_memory;
        scratch->scores = grown;
        scratch->cap = n;
    }
    if (ids > scratch->id_cap) {
        PyObject **more = PyMem_Realloc(scratch->ids, (size_t)ids * sizeof(PyObject *));
        if (!more)
            goto no_memory;
        scratch->ids = more;
        Py_ssize_t *cells = PyMem_Realloc(scratch->cell, (size_t)ids * sizeof(Py_ssize_t));
        if (!cells)
            goto no_memory;
        scratch->cell = cells;
        int *lists = PyMem_Realloc(scratch->list, (size_t)ids * sizeof(int));
        if (!lists)
            goto no_memory;
        scratch->list = lists;
        scratch->id_cap = ids;
    }
    return 0;
no_memory:
    PyErr_NoMemory();
    return -1;
}

/* How many of scores[0..n) are above s, and equal to it (NaN compares as C's > and ==: false). x86-64 always
 * has SSE2; GCC 12 does not vectorize the plain loop (a double comparison counted in an integer). */
static void count_above(const double *scores, Py_ssize_t n, double s, int64_t *above, int64_t *tied) {
    int64_t up = 0, same = 0;
    Py_ssize_t m = 0;
#ifdef __SSE2__
    __m128d target = _mm_set1_pd(s);
    __m128i ups = _mm_setzero_si128(), sames = _mm_setzero_si128();
    for (; m + 2 <= n; m += 2) { /* a true comparison is all ones: -1 as an integer */
        __m128d v = _mm_loadu_pd(scores + m);
        ups = _mm_sub_epi64(ups, _mm_castpd_si128(_mm_cmpgt_pd(v, target)));
        sames = _mm_sub_epi64(sames, _mm_castpd_si128(_mm_cmpeq_pd(v, target)));
    }
    int64_t lanes[2];
    _mm_storeu_si128((__m128i *)lanes, ups);
    up = lanes[0] + lanes[1];
    _mm_storeu_si128((__m128i *)lanes, sames);
    same = lanes[0] + lanes[1];
#endif
    for (; m < n; m++) {
        up += scores[m] > s;
        same += scores[m] == s;
    }
    *above = up;
    *tied = same;
}

typedef struct {
    double *values, *found;
    int64_t *above, *tied;
} Out;

/* Questions [first, first + count) of `judged` / `rows` (their dicts held by the caller), their cells from
 * `at` on, in four stages: every judgment's value, and which ids to locate (PyDict_Next); the scores of each
 * list holding such an id, through the dict's values iterator, which touches no key (PyDict_Next reads each
 * key's hash: a cache miss per result when each id is its own str, 1.4x the time; PyDict_Values builds a
 * list, 1.8x); every look-up; the counts (each located score compared with its list's scores; past
 * SORT_ABOVE located ids in one list, the list is sorted once and searched). Returns 0, NOT_MINE, or -1 on
 * error (set); `*nan` becomes the first question whose list read holds a NaN score, if it is still -1. */
static int batch(PyObject **marks, PyObject **rows, int count, Py_ssize_t first, double floor, Py_ssize_t at,
                 const Out *out, Scratch *scratch, Py_ssize_t *nan) {
    Py_ssize_t ids = 0, cells = 0, located = 0, start[BATCH + 1], hits[BATCH];
    int read[BATCH], bad[BATCH], status = 0;
    for (int b = 0; b < count; b++)
        ids += PyDict_Size(marks[b]);
    if (reserve(scratch, 0, ids) < 0)
        return -1;
    Py_ssize_t k = at;
    for (int b = 0; b < count; b++) { /* 1: the judgments */
        Py_ssize_t pos = 0, before = located;
        PyObject *id, *grade;
        while (!status && PyDict_Next(marks[b], &pos, &id, &grade)) {
            if (as_double(grade, &out->values[k]) == NOT_MINE ||
                (out->values[k] >= floor && !PyUnicode_CheckExact(id))) {
                status = NOT_MINE;
                break;
            }
            out->found[k] = NAN;
            out->above[k] = out->tied[k] = 0;
            if (out->values[k] >= floor) {
                scratch->ids[located] = id;
                scratch->cell[located] = k;
                scratch->list[located++] = b;
            }
            k++;
        }
        start[b] = cells;
        read[b] = located > before && PyDict_Size(rows[b]) > 0;
        cells += read[b] ? PyDict_Size(rows[b]) : 0;
        hits[b] = 0;
        bad[b] = 0;
    }
    start[count] = cells;
    if (!status && reserve(scratch, cells, 0) < 0)
        status = -1;
    for (int b = 0; b < count && !status; b++) { /* 2: the scores of each list holding an id to locate */
        if (!read[b])
            continue;
        Py_ssize_t n = start[b + 1] - start[b];
        double *scores = scratch->scores + start[b];
        PyObject *view = PyObject_CallFunctionObjArgs(dict_values, rows[b], NULL);
        PyObject *scored = view ? PyObject_GetIter(view) : NULL, *score = NULL;
        Py_XDECREF(view);
        if (!scored) {
            status = -1;
            break;
        }
        Py_ssize_t i = 0;
        for (; i < n && (score = PyIter_Next(scored)); i++) {
            int mine = as_double(score, &scores[i]);
            Py_DECREF(score);
            if (mine == NOT_MINE) {
                status = NOT_MINE;
                break;
            }
            bad[b] |= isnan(scores[i]);
        }
        Py_DECREF(scored);
        if (!status && PyErr_Occurred())
            status = -1;
        if (!status && bad[b] && *nan < 0)
            *nan = first + b;
    }
    for (Py_ssize_t j = 0; j < located && !status; j++) { /* 3: the look-ups */
        int b = scratch->list[j];
        if (!read[b] || bad[b])
            continue;
        PyObject *got = PyDict_GetItemWithError(rows[b], scratch->ids[j]);
        if (got) {
            if (as_double(got, &out->found[scratch->cell[j]]) == NOT_MINE)
                status = NOT_MINE;
            hits[b]++;
        } else if (PyErr_Occurred()) {
            status = -1;
        }
    }
    if (status)
        return status;
    for (int b = 0; b < count; b++) /* 4: the counts */
        if (hits[b] > SORT_ABOVE)
            qsort(scratch->scores + start[b], (size_t)(start[b + 1] - start[b]), sizeof(double), compare_doubles);
    for (Py_ssize_t j = 0; j < located; j++) {
        Py_ssize_t c = scratch->cell[j];
        int b = scratch->list[j];
        double s = out->found[c];
        if (isnan(s))
            continue;
        const double *scores = scratch->scores + start[b];
        Py_ssize_t n = start[b + 1] - start[b];
        if (hits[b] > SORT_ABOVE) {
            Py_ssize_t ge = bound(scores, n, s, 0), gt = bound(scores, n, s, 1);
            out->above[c] = n - gt;
            out->tied[c] = gt - ge;
            continue;
        }
        count_above(scores, n, s, &out->above[c], &out->tied[c]);
    }
    return 0;
}

/* The number of judgments of `q` questions, each list's and judgments' sizes written where asked (num_ret,
 * lengths: NULL for none), or NOT_MINE when an item of either list is not a dict. Both lists q long. */
static Py_ssize_t judgments_total(PyObject *rows, PyObject *judged, Py_ssize_t q, int64_t *num_ret, int64_t *lengths) {
    Py_ssize_t total = 0;
    for (Py_ssize_t i = 0; i < q; i++) {
        PyObject *marks = PyList_GetItem(judged, i), *row = PyList_GetItem(rows, i);
        if (!PyDict_CheckExact(marks) || !PyDict_CheckExact(row))
            return NOT_MINE;
        Py_ssize_t n = PyDict_Size(marks);
        if (num_ret) {
            num_ret[i] = PyDict_Size(row);
            lengths[i] = n;
        }
        total += n;
    }
    return total;
}

/* The two lists' common length, or -1 with a ValueError. */
static Py_ssize_t questions(PyObject *rows, PyObject *judged) {
    Py_ssize_t q = PyList_Size(judged);
    if (PyList_Size(rows) != q) {
        PyErr_SetString(PyExc_ValueError, "rows and judged differ in length");
        return -1;
    }
    return q;
}

static int writable(PyObject *obj, Py_buffer *view, Py_ssize_t itemsize, Py_ssize_t n, const char *name) {
    if (PyObject_GetBuffer(obj, view, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) < 0)
        return -1;
    if (view->len != n * itemsize) {
        PyErr_Format(PyExc_ValueError, "%s: %zd bytes, expected %zd", name, view->len, n * itemsize);
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

/* locate(rows, judged, floor, values, found, above, tied) -> int
 *
 * rows, judged: lists of dicts, one per question (the run's scores, the judgments). values, found:
 * float64 buffers, above, tied: int64 buffers, each one cell per judgment, question by question in the
 * judged dicts' order. Fills them; found is NaN where a judgment is not located (below floor, or not in
 * the list). Returns -1 when done, the index of the first question whose list read holds a NaN score
 * (the caller refuses it), or -2 when the Python reader must do the call (see the top). */
static PyObject *locate(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *rows, *judged, *bufs[4];
    double floor;
    if (!PyArg_ParseTuple(args, "O!O!dOOOO", &PyList_Type, &rows, &PyList_Type, &judged, &floor, &bufs[0], &bufs[1],
                          &bufs[2], &bufs[3]))
        return NULL;
    Py_ssize_t q = questions(rows, judged);
    if (q < 0)
        return NULL;
    Py_ssize_t total = judgments_total(rows, judged, q, NULL, NULL);
    if (total == NOT_MINE)
        return PyLong_FromLong(NOT_MINE);
    Py_buffer views[4];
    const Py_ssize_t sizes[4] = {sizeof(double), sizeof(double), sizeof(int64_t), sizeof(int64_t)};
    const char *names[4] = {"values", "found", "above", "tied"};
    int got = 0;
    for (; got < 4; got++)
        if (writable(bufs[got], &views[got], sizes[got], total, names[got]) < 0)
            break;
    Py_ssize_t nan = -1;
    int status = got < 4 ? -1 : 0;
    if (!status) {
        Scratch scratch = {NULL, NULL, NULL, NULL, 0, 0};
        Out out = {(double *)views[0].buf, (double *)views[1].buf, (int64_t *)views[2].buf, (int64_t *)views[3].buf};
        Py_ssize_t at = 0;
        for (Py_ssize_t first = 0; first < q && !status;) {
            PyObject *marks[BATCH], *row[BATCH]; /* held: nothing the batch runs can take them away */
            int count = 0;
            for (Py_ssize_t cells = 0; count < BATCH && first + count < q; count++) {
                PyObject *next = PyList_GetItem(rows, first + count);
                cells += PyDict_Size(next);
                if (count && cells > BATCH_CELLS)
                    break; /* a batch's scores stay few (long lists come one a batch) */
                marks[count] = PyList_GetItem(judged, first + count);
                row[count] = next;
                Py_INCREF(marks[count]);
                Py_INCREF(row[count]);
            }
            status = batch(marks, row, count, first, floor, at, &out, &scratch, &nan);
            for (int b = 0; b < count; b++) {
                at += PyDict_Size(marks[b]);
                Py_DECREF(marks[b]);
                Py_DECREF(row[b]);
            }
            first += count;
        }
        PyMem_Free(scratch.scores);
        PyMem_Free(scratch.ids);
        PyMem_Free(scratch.cell);
        PyMem_Free(scratch.list);
    }
    for (int b = 0; b < got; b++)
        PyBuffer_Release(&views[b]);
    if (status == -1)
        return NULL;
    return PyLong_FromSsize_t(status == NOT_MINE ? NOT_MINE : nan >= 0 ? nan : DONE);
}

/* sizes(rows, judged, num_ret, lengths) -> int
 *
 * rows, judged as for locate; num_ret, lengths: int64 buffers, one cell per question. Fills them with each
 * list's length and each question's number of judgments; returns the total of those, or -2 when an item
 * is not a dict (the caller makes it one, or reads in Python). */
static PyObject *sizes(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *rows, *judged, *bufs[2];
    if (!PyArg_ParseTuple(args, "O!O!OO", &PyList_Type, &rows, &PyList_Type, &judged, &bufs[0], &bufs[1]))
        return NULL;
    Py_ssize_t q = questions(rows, judged);
    if (q < 0)
        return NULL;
    Py_buffer views[2];
    if (writable(bufs[0], &views[0], sizeof(int64_t), q, "num_ret") < 0)
        return NULL;
    if (writable(bufs[1], &views[1], sizeof(int64_t), q, "lengths") < 0) {
        PyBuffer_Release(&views[0]);
        return NULL;
    }
    Py_ssize_t total = judgments_total(rows, judged, q, views[0].buf, views[1].buf);
    PyBuffer_Release(&views[0]);
    PyBuffer_Release(&views[1]);
    return PyLong_FromSsize_t(total);
}

static PyMethodDef methods[] = {
    {"sizes", sizes, METH_VARARGS,
     "sizes(rows, judged, num_ret, lengths) -> int: each list's length and number of judgments; their total."},
    {"locate", locate, METH_VARARGS,
     "locate(rows, judged, floor, values, found, above, tied) -> int: goldeval.metrics.judge's dict reader."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_locate", NULL, 0, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__locate(void) {
    if (!dict_values && !(dict_values = PyObject_GetAttrString((PyObject *)&PyDict_Type, "values")))
        return NULL;
    return PyModule_Create(&module);
}
