/// \file
/// The whole public API in one include: errors, tensors, models, sessions and plans, loaders,
/// runners, the comparator, data loaders, results files and navigator packages.
#pragma once

#include "comparator.h"
#include "data_loader.h"
#include "errors.h"
#include "loaders.h"
#include "model.h"
#include "navigator.h"
#include "results.h"
#include "runners.h"
#include "session.h"
#include "tensor.h"
