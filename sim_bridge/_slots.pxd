# Shared C helpers of the compiled extensions that read objects' __slots__ in place (inline,
# nothing to link): CPython's accessors, and where a slot lives in a class's instances.
from cpython.object cimport PyObject


cdef extern from "structmember.h":
    ctypedef struct PyMemberDef:
        Py_ssize_t offset


cdef extern from "Python.h":
    ctypedef struct PyMemberDescrObject:
        PyMemberDef* d_member
    bint _float_exact "PyFloat_CheckExact"(PyObject* o)
    double _float_value "PyFloat_AS_DOUBLE"(PyObject* o)
    PyObject* _list_item "PyList_GET_ITEM"(object lst, Py_ssize_t i)
    Py_ssize_t _list_size "PyList_GET_SIZE"(object lst)
    PyObject* _tuple_item "PyTuple_GET_ITEM"(object t, Py_ssize_t i)
    Py_ssize_t _tuple_size "PyTuple_GET_SIZE"(object t)
    bint _long_exact "PyLong_CheckExact"(PyObject* o)
    long long _long_value "PyLong_AsLongLong"(PyObject* o) except? -1
    void Py_INCREF(PyObject* o)
    void Py_XDECREF(PyObject* o)


cdef inline list slot_offsets(object cls, tuple names):
    """The offsets of the slots ``names`` in ``cls`` instances (where CPython's member
    descriptor of each says), or None when one of them is not a plain slot."""
    offsets = []
    for name in names:
        d = getattr(cls, name, None)
        if type(d).__name__ != "member_descriptor":
            return None
        offsets.append((<PyMemberDescrObject*>(<PyObject*>d)).d_member.offset)
    return offsets


cdef inline PyObject* slot_ptr(object o, Py_ssize_t off) noexcept:
    """The object in the slot at ``off`` of ``o`` (borrowed; NULL when unset)."""
    return (<PyObject**>((<char*><PyObject*>o) + off))[0]


cdef inline void slot_set(object o, Py_ssize_t off, object value) noexcept:
    """Set the slot at ``off`` of ``o`` to ``value`` (what ``o.name = value`` does for a plain
    slot: the new value's reference taken, the old one's dropped)."""
    cdef PyObject** slot = <PyObject**>((<char*><PyObject*>o) + off)
    cdef PyObject* old = slot[0]
    Py_INCREF(<PyObject*>value)
    slot[0] = <PyObject*>value
    Py_XDECREF(old)
