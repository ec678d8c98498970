// SPDX-License-Identifier: MIT
/* tests/collapse: runs cmd_collapse() alone, so the tests need no BPF build. */
#include "cmds.h"

int main(int argc, char **argv)
{
	return cmd_collapse(argc, argv);
}
