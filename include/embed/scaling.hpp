#pragma once
// Multiplying embeddings by sqrt(d): the size changes, the direction does not.

#include "embed/types.hpp"

namespace embed {

/// a is (d), returns sqrt(dot(a, a) / d); 0.0 for an empty vector.
double rms(Eigen::Ref<const Vector> a);

/// table is (V, d) of double, float32 or bfloat16 (owned or viewed), ids is (n), returns (n, d) in double:
/// lookup(table, ids) widened to double, times std::sqrt(dim); a narrow table gives the same bits as the widened one.
template <TableOrView T>
Table scaled_lookup(const T& table, Ids ids, Index dim);

}  // namespace embed
