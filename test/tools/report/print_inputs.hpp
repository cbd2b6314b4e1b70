#pragma once
// Readable GoogleTest names for parameterised report tests instead of a byte dump.
#include <ostream>

#include "report.hpp"

namespace embed::report {

/// Prints the inputs as "vocab V dim d seed S ..." (found by GoogleTest through ADL).
inline void PrintTo(const ReportInputs& in, std::ostream* os) {
    *os << "vocab " << in.vocab << " dim " << in.dim << " seed " << in.seed << " probe " << in.probe << " k " << in.k
        << " pick " << in.pick << " factor " << in.stretch_factor << " growth " << in.growth;
}

}  // namespace embed::report
