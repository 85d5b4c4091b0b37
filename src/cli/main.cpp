#include "cli/command.h"

int main(int argc, char** argv) { return parity::cli::main_entry(argc, argv); }
