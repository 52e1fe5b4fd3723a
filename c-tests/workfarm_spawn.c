/* oxmpi-test: ranks=1 modes=processes,threads env=OXMPI_UNIVERSE_SIZE=8 timeout=60 mpich=skip */
/* oxmpi-test: expect-stdout="result: " expect-stdout="rank 4: " expect-stdout="reassigned: 0" */
/* The work farm started as seed 001 starts it: mpiexec starts the server alone, which reads
   workfarm/spawn_tree.conf (5 nodes, a tree of depth 2), spawns the 4 other nodes with
   MPI_Comm_spawn (passing them -child) and hands them their place in the tree; the demo checks
   the exact sum, every item delivered once and nothing reassigned, and prints the items per rank.
   (mpich=skip: Debian's MPICH cannot spawn.) */
#define WF_DEMO_CONFIG_DEFAULT "spawn_tree.conf"
#include "workfarm/workfarm.c"
#include "workfarm/demo_integrate.c"
