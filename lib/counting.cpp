#include "embed/counting.hpp"

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

Index dtype_bytes(Dtype dtype) {
    switch (dtype) {
        case Dtype::fp64: return 8;
        case Dtype::fp32: return 4;
        case Dtype::bf16: return 2;
        case Dtype::fp16: return 2;
    }
    throw std::invalid_argument("unknown dtype " + std::to_string(static_cast<int>(dtype)));
}

const char* dtype_name(Dtype dtype) {
    switch (dtype) {
        case Dtype::fp64: return "fp64";
        case Dtype::fp32: return "fp32";
        case Dtype::bf16: return "bf16";
        case Dtype::fp16: return "fp16";
    }
    throw std::invalid_argument("unknown dtype " + std::to_string(static_cast<int>(dtype)));
}

Index table_bytes(Index params, Dtype dtype) {
    detail::require_non_negative(params, "params");
    return detail::checked_mul(params, dtype_bytes(dtype), "table bytes");
}

}  // namespace embed
