#pragma once
// The first principal component of a table's rows, for the vocabulary scan's output_distance: the top
// eigenvector of the rows' covariance, found by block Krylov passes over the table (the d' x d' covariance is
// never formed), with the Davis-Kahan bound on its error.

#include <limits>
#include <vector>

#include "embed/types.hpp"

namespace embed::detail {

/// The rows the covariance is taken over.
struct CovarianceRows {
    std::vector<char> finite;  // (V) 1 where the row holds no NaN or infinity
    Index count = 0;           // how many rows are finite
    Vector mean;               // (d') the mean of the finite rows; zeros when there are none
};

/// The top eigenpair of the covariance and how far it can be trusted (VocabularyScan's fields of the same
/// meaning, scan.hpp).
struct PrincipalComponent {
    Vector component;  // (d') unit vector, its entry of largest magnitude (the first on ties) positive; zeros
                       // when the rows do not vary
    double eigenvalue = 0.0;
    double gap = 0.0;  // the largest Ritz value minus the second one and its residual
    double error_bound = std::numeric_limits<double>::infinity();  // residual / gap, Davis-Kahan
    bool converged = false;                                         // error_bound <= 1e-12
    int iterations = 0;                                             // passes over the table
};

/// output is (V, d'), a BasicTableView or a QuantisedTable (lib/scan/row_groups.hpp reads either); rows says which of its rows count, and their mean. The covariance of the finite rows
/// divides by rows.count - 1. With d' = 0 or fewer than two finite rows: zeros, not converged, no pass. The
/// iteration stops once the bound is <= 1e-12, when the basis spans the whole space, when the bound stalls
/// (a (near-)repeated top eigenvalue) or after 24 passes. The same bits whatever the thread count.
template <class Source>
PrincipalComponent principal_component(const Source& output, const CovarianceRows& rows);

}  // namespace embed::detail
