// SPDX-License-Identifier: MIT
// Garbage made at a known ratio (tests/record/events.sh): each round churnA() allocates
// three times the bytes churnB() does, all of it garbage at once, so druntime's
// collections (Gcx.fullcollect) come from churnA() three times as often.
//   gdc -O1 -fno-omit-frame-pointer gc.d -o gc
// usage: gc ROUNDS --DRT-gcopt=profile:1
// prints "truth collections=N collection_us=US": druntime's own count of its collections
// and of the time it measured inside them (the collection at exit follows the line)
import core.memory : GC;
import std.conv : to;
import std.stdio : writefln;

__gshared ubyte[] sink;

void churnA(size_t n)
{
	foreach (i; 0 .. 3 * n)
		sink = new ubyte[4000];
}

void churnB(size_t n)
{
	foreach (i; 0 .. n)
		sink = new ubyte[4000];
}

void main(string[] args)
{
	size_t rounds = args.length > 1 ? args[1].to!size_t : 100;

	foreach (r; 0 .. rounds) {
		churnA(2000);
		churnB(2000);
	}
	auto p = GC.profileStats();
	writefln("truth collections=%d collection_us=%d", p.numCollections,
		 p.totalCollectionTime.total!"usecs");
}
