// SPDX-License-Identifier: MIT
// A JIT workload whose profile is known by construction: nearly all of its CPU time is
// in Hot.hot(). Run: java -XX:+PreserveFramePointer -XX:CompileCommand=dontinline,Hot::hot
// Hot SECONDS. Prints "ready PID" once hot() has run for a second (compiled by then),
// then keeps calling it until SECONDS have passed.
public class Hot {
	static long hot(long n) {
		long s = 0;
		for (long i = 0; i < n; i++)
			s = (s * 31 + i) % 1000003;
		return s;
	}

	public static void main(String[] args) {
		double seconds = Double.parseDouble(args.length > 0 ? args[0] : "5");
		long start = System.nanoTime();
		long end = start + (long) (seconds * 1e9);
		long acc = 0;
		boolean ready = false;
		while (System.nanoTime() < end) {
			acc += hot(100000);
			if (!ready && System.nanoTime() - start > 1_000_000_000L) {
				System.out.println("ready " + ProcessHandle.current().pid());
				System.out.flush();
				ready = true;
			}
		}
		System.err.println("done " + acc); // stdout (the ready FIFO) may be closed
	}
}
