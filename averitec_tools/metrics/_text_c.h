/* The optional _text_c extension's functions defined outside _text_c.c. */
#ifndef AVERITEC_TEXT_C_H
#define AVERITEC_TEXT_C_H
#include <Python.h>

/* _chunks_c.c: the Treebank chunk tokenizer's common case (see there). */
PyObject *plan_sentences(PyObject *self, PyObject *args);
PyObject *fill_plans(PyObject *self, PyObject *args);
PyObject *inert_many(PyObject *self, PyObject *args);

/* _lookup_c.c: table lookups over many token lists (see there). */
PyObject *lookup_many(PyObject *self, PyObject *args);
PyObject *join_many(PyObject *self, PyObject *args);
PyObject *concat_many(PyObject *self, PyObject *args);
PyObject *missing_many(PyObject *self, PyObject *args);
PyObject *analyse_many(PyObject *self, PyObject *args);
/* 0 when item is a str, else -1 with a TypeError saying message. */
int require_str(PyObject *item, const char *message);

#endif
