// SPDX-License-Identifier: MIT
/* tests/flamegraph: runs cmd_flamegraph() alone, so the tests need no BPF build. */
#include "cmds.h"

int main(int argc, char **argv)
{
	return cmd_flamegraph(argc, argv);
}
