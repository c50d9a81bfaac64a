#include "cli/cli.hpp"

int main(int argc, char** argv) { return rendezvous::core::RunCli(argc, argv); }
