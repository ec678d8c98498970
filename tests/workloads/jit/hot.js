// SPDX-License-Identifier: MIT
// A JIT workload whose profile is known by construction: nearly all of its CPU time is
// in hot(). Run: node --perf-basic-prof --no-turbo-inlining hot.js SECONDS
// Prints "ready PID" once hot() has run for half a second (optimized by then), then
// keeps calling it until SECONDS have passed.
'use strict';

function hot(n) {
	let s = 0;
	for (let i = 0; i < n; i++)
		s = (s * 31 + i) % 1000003;
	return s;
}

const seconds = parseFloat(process.argv[2] || '5');
const start = Date.now();
let acc = 0;
let ready = false;
while (Date.now() - start < seconds * 1000) {
	acc += hot(200000);
	if (!ready && Date.now() - start > 500) {
		process.stdout.write(`ready ${process.pid}\n`);
		ready = true;
	}
}
// stdout (the ready FIFO) may be closed by now
process.stderr.write(`done ${acc}\n`);
