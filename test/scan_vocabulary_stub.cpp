// TEST-ONLY stub of Vocabulary's constructor and accessors (deleted before the final commit).
#include "embed/vocabulary.hpp"
#include <stdexcept>
namespace embed {
Vocabulary::Vocabulary(std::vector<std::string> tokens, std::vector<TokenType> types, TokenReading reading,
                       std::vector<bool> missing)
    : tokens_(std::move(tokens)), types_(std::move(types)), missing_(std::move(missing)), reading_(reading) {
    if (types_.empty()) types_.assign(tokens_.size(), TokenType::normal);
}
void Vocabulary::check_id(Index id) const { if (id < 0 || id >= size()) throw std::out_of_range("id"); }
const std::string& Vocabulary::token(Index id) const { check_id(id); return tokens_[static_cast<std::size_t>(id)]; }
TokenType Vocabulary::type(Index id) const { check_id(id); return types_[static_cast<std::size_t>(id)]; }
}  // namespace embed
