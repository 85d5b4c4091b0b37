/// \file
/// Inputs for runners: parity::compare::DataLoader (seeded random feeds in value ranges, the same
/// values Polygraphy generates for the same seed), FeedList (feeds you already have), FeedGenerator
/// (feeds your code makes on demand), and input files (compare/feed_files.h: .json, .npz, .npy).
#pragma once

#include "compare/data_loader.h"
#include "compare/feed_files.h"
