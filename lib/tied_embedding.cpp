#include "embed/tied_embedding.hpp"

#include <utility>

#include "checks.hpp"
#include "embed/logits.hpp"
#include "embed/lookup.hpp"
#include "embed/table.hpp"

namespace embed {

template <StoredScalar Scalar>
BasicTiedEmbedding<Scalar>::BasicTiedEmbedding(BasicTable<Scalar> table) : table_(std::move(table)) {}

template <StoredScalar Scalar>
BasicTable<Scalar> BasicTiedEmbedding<Scalar>::embed(Ids ids) const {
    return lookup(table_, ids);
}

template <StoredScalar Scalar>
Vector BasicTiedEmbedding<Scalar>::logits(const Vector& hidden) const {
    return embed::logits(table_, hidden);
}

template <StoredScalar Scalar>
Index BasicTiedEmbedding<Scalar>::param_count() const {
    return embed::param_count(table_.rows(), table_.cols());
}

template class BasicTiedEmbedding<double>;
template class BasicTiedEmbedding<float>;
template class BasicTiedEmbedding<Eigen::bfloat16>;

UntiedEmbedding::UntiedEmbedding(Table input, Table output) {
    if (shape(input) != shape(output)) {
        throw std::invalid_argument("untied tables differ in shape: input is " + std::to_string(input.rows()) +
                                    " x " + std::to_string(input.cols()) + ", output is " +
                                    std::to_string(output.rows()) + " x " + std::to_string(output.cols()));
    }
    input_ = std::move(input);
    output_ = std::move(output);
}

Table UntiedEmbedding::embed(Ids ids) const { return lookup(input_, ids); }

Vector UntiedEmbedding::logits(const Vector& hidden) const { return embed::logits(output_, hidden); }

Index UntiedEmbedding::param_count() const {
    return detail::checked_mul(2, embed::param_count(input_.rows(), input_.cols()), "untied param_count");
}

}  // namespace embed
