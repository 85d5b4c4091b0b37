/// \file
/// Comparing runners (parity::compare::Comparator): run every runner on the same inputs
/// (Comparator::run), compare their outputs pairwise (Comparator::compare_accuracy) with a compare
/// function (compare::compare_funcs: simple with atol/rtol and an error statistic, indices,
/// distance and quality metrics), and compare every intermediate tensor (compare::layerwise;
/// Polygraphy's `mark all` in one call: compare::compare_every_layer).
#pragma once

#include "compare/comparator.h"
#include "compare/compare_func.h"
#include "compare/layerwise.h"
#include "compare/mark_all.h"
