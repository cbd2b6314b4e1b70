#include "embed/counting.hpp"

#include <stdexcept>
#include <string>

#include "checks.hpp"
#include "embed/table.hpp"

namespace embed {

Index tied_params(Index vocab, Index dim) { return param_count(vocab, dim); }

Index untied_params(Index vocab, Index dim) {
    return detail::checked_mul(2, param_count(vocab, dim), "untied_params");
}

VocabGrowth vocab_growth(Index vocab, Index dim, Index factor) {
    detail::require_non_negative(factor, "growth factor");
    VocabGrowth growth;
    growth.vocab = vocab;
    growth.dim = dim;
    growth.tied = tied_params(vocab, dim);
    growth.untied = untied_params(vocab, dim);
    growth.bigger_vocab = detail::checked_mul(vocab, factor, "bigger_vocab");
    growth.bigger_tied = tied_params(growth.bigger_vocab, dim);
    growth.bigger_untied = untied_params(growth.bigger_vocab, dim);
    growth.saved = growth.untied - growth.tied;
    return growth;
}

Index table_bytes(Index params, ElementType type) {
    detail::require_non_negative(params, "params");
    const Index values = block_values(type);
    if (params % values != 0) {
        throw std::invalid_argument("table_bytes: params = " + std::to_string(params) + " is not a multiple of " +
                                    std::to_string(values) + ", the values in one block of " +
                                    std::string(element_type_name(type)));
    }
    return detail::checked_mul(params / values, block_bytes(type), "table bytes");
}

}  // namespace embed
