/* oxmpi-test: ranks=6,8 timeout=60 */
/* oxmpi-test: env="WORKFARM_ARGS=--tree 0:1+3;1:2;3:4+5 --threads 1" env="WORKFARM_ARGS=--tree 0:5;5:4;4:1+2+3 --threads 2" */
/* The work farm on explicit trees (the seed's tree; a deep chain with a fan at the bottom);
   ranks the tree does not name (6, 7) are children of rank 0. */
#define WF_DEMO_QUIET_DEFAULT 1
#include "workfarm/workfarm.c"
#include "workfarm/demo_integrate.c"
