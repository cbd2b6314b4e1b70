#pragma once
// The table types every public table function is defined for. Each operation
// is declared once, as a template over TableOrView (embed/types.hpp), and
// defined once in its .cpp; these lists instantiate it there for every type
// the concept admits, so a caller's call always finds its definition.

#include "embed/types.hpp"

/// Calls X(T) for the three table types of one stored scalar: owned, viewed read-only, viewed writable.
#define EMBED_FOR_EACH_TABLE_OF(X, Scalar) \
    X(::embed::BasicTable<Scalar>)         \
    X(::embed::BasicTableView<Scalar>)     \
    X(::Eigen::Map<::embed::BasicTable<Scalar>>)

/// Calls X(T) for the six float32 and bfloat16 table types.
#define EMBED_FOR_EACH_NARROW_TABLE(X) \
    EMBED_FOR_EACH_TABLE_OF(X, float)  \
    EMBED_FOR_EACH_TABLE_OF(X, ::Eigen::bfloat16)

/// Calls X(T) for all nine table types: exactly those TableOrView admits.
#define EMBED_FOR_EACH_STORED_TABLE(X)  \
    EMBED_FOR_EACH_TABLE_OF(X, double) \
    EMBED_FOR_EACH_NARROW_TABLE(X)
