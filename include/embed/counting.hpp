#pragma once
// Counting parameters, tied and untied, and what a bigger vocabulary costs.
// Integer arithmetic only; a count past 2^63 - 1 throws overflow_error.

#include "embed/types.hpp"

namespace embed {

/// Parameters with one table serving input and output: V * d.
Index tied_params(Index vocab, Index dim);

/// Parameters with separate input and output tables: 2 * V * d.
Index untied_params(Index vocab, Index dim);

/// Counts before and after multiplying the vocabulary by a factor.
struct VocabGrowth {
    Index vocab = 0;
    Index bigger_vocab = 0;
    Index dim = 0;
    Index tied = 0;
    Index bigger_tied = 0;
    Index untied = 0;
    Index bigger_untied = 0;
    Index saved = 0;  // untied - tied
    friend bool operator==(const VocabGrowth&, const VocabGrowth&) = default;
};

/// Counts for (V, d) and (V * factor, d), tied and untied; saved = untied - tied.
VocabGrowth vocab_growth(Index vocab, Index dim, Index factor);

/// Number formats a table may be stored in.
enum class Dtype { fp64, fp32, bf16, fp16 };

/// Bytes one value takes in a format: 8, 4, 2 or 2.
Index dtype_bytes(Dtype dtype);

/// The format's usual name: "fp64", "fp32", "bf16" or "fp16".
const char* dtype_name(Dtype dtype);

/// Bytes of `params` values stored in a format: params * dtype_bytes(dtype).
Index table_bytes(Index params, Dtype dtype);

}  // namespace embed
