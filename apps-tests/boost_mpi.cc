// Boost.MPI (Debian's libboost-mpi, built on Open MPI): serialized objects through
// point-to-point, nonblocking requests, broadcast, gather, all_reduce with a user functor
// (a non-commutative one too), scan, communicator split, Cartesian topology and a skeleton
// and content transfer. Prints "boost_mpi: OK (N ranks)" on rank 0 when all checks passed.
#include <boost/mpi.hpp>
#include <boost/mpi/cartesian_communicator.hpp>
#include <boost/serialization/map.hpp>
#include <boost/serialization/string.hpp>
#include <boost/serialization/vector.hpp>
#include <iostream>
#include <list>
#include <map>
#include <string>
#include <vector>
#include <boost/serialization/list.hpp>

namespace mpi = boost::mpi;

struct Record {
    int id = 0;
    std::string name;
    std::vector<double> values;
    template <class A> void serialize(A &ar, unsigned) { ar & id & name & values; }
};

// 2x2 matrix product: associative, not commutative.
struct Mat {
    long a = 1, b = 0, c = 0, d = 1;
    template <class A> void serialize(A &ar, unsigned) { ar & a & b & c & d; }
};
struct MatMul {
    Mat operator()(const Mat &x, const Mat &y) const {
        Mat r;
        r.a = x.a * y.a + x.b * y.c; r.b = x.a * y.b + x.b * y.d;
        r.c = x.c * y.a + x.d * y.c; r.d = x.c * y.b + x.d * y.d;
        return r;
    }
};

static int bad = 0;
#define CHECK(cond) do { if (!(cond)) { std::cerr << "boost_mpi: rank " << world.rank() << ": FAIL " #cond " (line " << __LINE__ << ")\n"; bad = 1; } } while (0)

int main(int argc, char **argv) {
    mpi::environment env(argc, argv);
    mpi::communicator world;
    const int rank = world.rank(), size = world.size();

    // Serialized records around a ring, blocking and nonblocking.
    Record mine{rank, "rank-" + std::to_string(rank), std::vector<double>(rank + 3, rank * 0.5)};
    Record got;
    const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    mpi::request reqs[2] = {world.isend(next, 7, mine), world.irecv(prev, 7, got)};
    mpi::wait_all(reqs, reqs + 2);
    CHECK(got.id == prev && got.name == "rank-" + std::to_string(prev) && got.values.size() == size_t(prev + 3));
    if (size > 1) {
        std::map<std::string, int> m;
        if (rank == 0) {
            for (int i = 0; i < 50; i++) m["k" + std::to_string(i)] = i * i;
            world.send(1, 3, m);
        } else if (rank == 1) {
            world.recv(0, 3, m);
            CHECK(m.size() == 50 && m["k7"] == 49);
        }
    }

    // Broadcast and gather of serialized objects.
    std::vector<std::string> words;
    if (rank == 0) words = {"alpha", "beta", "gamma", std::string(100000, 'x')};
    mpi::broadcast(world, words, 0);
    CHECK(words.size() == 4 && words[3].size() == 100000 && words[1] == "beta");
    std::vector<Record> all;
    mpi::gather(world, mine, all, 0);
    if (rank == 0) {
        CHECK(int(all.size()) == size);
        for (int r = 0; r < size; r++) CHECK(all[r].id == r && all[r].values.size() == size_t(r + 3));
    }

    // Reductions: builtin on a plain type, a non-commutative functor on a serialized type, scan.
    int sum = mpi::all_reduce(world, rank + 1, std::plus<int>());
    CHECK(sum == size * (size + 1) / 2);
    Mat m; m.a = 1; m.b = rank + 1; m.c = 0; m.d = 1;  // upper triangular: products add b
    Mat prod = mpi::all_reduce(world, m, MatMul());
    CHECK(prod.a == 1 && prod.b == long(size) * (size + 1) / 2 && prod.d == 1);
    Mat lower; lower.a = 1; lower.b = 0; lower.c = rank + 1; lower.d = 2;  // order matters
    Mat expect; for (int r = 0; r < size; r++) { Mat x; x.c = r + 1; x.d = 2; expect = MatMul()(expect, x); }
    Mat ordered = mpi::all_reduce(world, lower, MatMul());
    CHECK(ordered.a == expect.a && ordered.b == expect.b && ordered.c == expect.c && ordered.d == expect.d);
    double pre = mpi::scan(world, double(rank), std::plus<double>());
    CHECK(pre == rank * (rank + 1) / 2.0);

    // Split and a Cartesian topology.
    mpi::communicator half = world.split(rank % 2, -rank);
    CHECK(half.size() == (size + 1 - rank % 2) / 2);
    CHECK(mpi::all_reduce(half, rank, mpi::maximum<int>()) == (rank % 2 == 0 ? (size - 1) / 2 * 2 : (size / 2) * 2 - 1));
    std::vector<mpi::cartesian_dimension> dims(1, mpi::cartesian_dimension(size, true));
    mpi::cartesian_communicator ring(world, mpi::cartesian_topology(dims));
    std::pair<int, int> sh = ring.shifted_ranks(0, 1);
    CHECK(sh.first == (ring.rank() + size - 1) % size && sh.second == (ring.rank() + 1) % size);

    // Skeleton and content: the list's shape once, then its values twice.
    std::list<int> lst;
    if (rank == 0) for (int i = 0; i < 10; i++) lst.push_back(i);
    mpi::broadcast(world, mpi::skeleton(lst), 0);
    mpi::content c = mpi::get_content(lst);
    for (int round = 1; round <= 2; round++) {
        if (rank == 0) { int i = 0; for (int &x : lst) x = i++ * round; }
        mpi::broadcast(world, c, 0);
        int i = 0; for (int x : lst) CHECK(x == i++ * round);
        CHECK(lst.size() == 10);
    }

    int anybad = mpi::all_reduce(world, bad, mpi::maximum<int>());
    if (rank == 0 && !anybad) std::cout << "boost_mpi: OK (" << size << " ranks)" << std::endl;
    return anybad;
}
