#pragma once
// Counting parameters, tied and untied, and what a bigger vocabulary costs.
// Integer arithmetic only; a count past 2^63 - 1 throws overflow_error.

#include "embed/element_type.hpp"
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

/// Bytes of `params` values stored as `type`: params / block_values(type) * block_bytes(type) (params * 8,
/// 4, 2 or 2 for f64, f32, f16 and bf16). For a quantised type params must be whole blocks (a multiple of 32
/// or 256); any other count throws std::invalid_argument naming it and the block, a negative one likewise,
/// and a byte count past 2^63 - 1 throws std::overflow_error.
Index table_bytes(Index params, ElementType type);

}  // namespace embed
