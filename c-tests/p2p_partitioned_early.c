/* oxmpi-test: ranks=2,4,8 timeout=60 mpich=skip */
/* Partitioned communication moves each partition as it becomes ready: the receiver sees its
   partition 0 arrive (MPI_Parrived) while the sender still holds back the others, waiting for
   the receiver to say so. The standard allows an implementation to move the data only once all
   partitions are ready, and MPICH does: oxmpi only. Also oxmpi's MPI_Cancel of a partitioned
   receive of which nothing arrived yet (the standard lets a cancel fail). The cases are in
   p2p_partitioned.c. */
#define OXT_PART_EARLY 1
#include "p2p_partitioned.c"
