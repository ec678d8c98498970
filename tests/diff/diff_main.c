// SPDX-License-Identifier: MIT
/* tests/diff: runs cmd_diff() alone, so the tests need no BPF build. */
#include "cmds.h"

int main(int argc, char **argv)
{
	return cmd_diff(argc, argv);
}
