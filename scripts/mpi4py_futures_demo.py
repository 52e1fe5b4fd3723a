"""mpi4py.futures on oxmpi: an MPIPoolExecutor maps work over its workers (scripts/mpi4py-suite.sh).

Run as `python mpi4py_futures_demo.py spawn` under `mpiexec -n 1`: the executor spawns 3 workers
(MPI_Comm_spawn from a singleton-world parent); or as `python -m mpi4py.futures
mpi4py_futures_demo.py world N` under `mpiexec -n N+1`: the workers are the other world ranks.
Checks the results and that the expected workers served them; prints one line.
"""
import sys

from mpi4py import MPI
from mpi4py.futures import MPIPoolExecutor


def square(x):
    return x * x


def worker_id(_):
    """Who runs this task: (spawned?, size of its world, its world rank)."""
    world = MPI.COMM_WORLD
    return MPI.Comm.Get_parent() != MPI.COMM_NULL, world.Get_size(), world.Get_rank()


def main():
    form = sys.argv[1]
    with MPIPoolExecutor(max_workers=3) as ex:
        got = list(ex.map(square, range(200), chunksize=7))
        assert got == [x * x for x in range(200)], "wrong squares"
        futs = [ex.submit(pow, 2, k) for k in range(20)]
        assert [f.result() for f in futs] == [2**k for k in range(20)], "wrong powers"
        ids = set(ex.map(worker_id, range(300)))
    if form == "spawn":
        # Three spawned workers, world ranks 0..2 of their own world of 3.
        want = {(True, 3, r) for r in range(3)}
        assert ids <= want and len(ids) >= 1, f"workers {sorted(ids)}, expected a subset of {sorted(want)}"
    else:
        n = int(sys.argv[2])
        want = {(False, n + 1, r) for r in range(1, n + 1)}
        assert ids <= want and len(ids) >= 1, f"workers {sorted(ids)}, expected a subset of {sorted(want)}"
    print(f"futures {form} OK: {sum(got)} from {len(ids)} worker(s)")


if __name__ == "__main__":
    main()
