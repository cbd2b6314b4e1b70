#pragma once
// Lists of row ids on the command line, the same for every tool: comma-separated ids and inclusive ranges
// ("177,178,180-187"), each range low to high, checked against the table's rows before a range is expanded
// (so "0-9223372036854775806" is refused, not allocated).

#include <string_view>
#include <vector>

#include <embed/types.hpp>

#include "arguments.hpp"

namespace embed::tools {

/// One inclusive range of ids as a list spells it ("177" is 177-177).
struct IdRange {
    Index first = 0;
    Index last = 0;
};

/// list as ids and ranges, in the order given. An empty list or item, an item that is not a whole-string
/// decimal id (no sign, not negative, in 64 bits) and a range that runs backwards throw invalid_argument
/// "FLAG 'LIST' has ... (allowed: ALLOWED)", with flag's name and allowed text. Keywords ("none") are the
/// tool's to read before calling this.
std::vector<IdRange> parse_id_list(const ArgumentText& flag, std::string_view list);

/// The ids of ranges, ascending and each once; an id at or past rows throws invalid_argument
/// "FLAG has id ID, outside the table's rows [0, ROWS)" before any range is expanded.
std::vector<Index> expand_id_list(std::string_view flag, const std::vector<IdRange>& ranges, Index rows);

}  // namespace embed::tools
