/* oxmpi-test: ranks=3,5,8 timeout=60 mpich=skip */
/* oxmpi-test: env-matrix="WORKFARM_ARGS=--simulate-loss 1|--simulate-loss 2 --fanout 1|--simulate-loss 1 --fanout 1" */
/* The work farm's reassignment path: a parent takes a child's subtree as lost (simulated: the
   child keeps running and is told to stop at the end) and hands the items it held to others.
   The demo checks the sum, that each item arrived once and that some were reassigned.
   (mpich=skip: the runner sets no variables with --mpich; run by hand with WORKFARM_ARGS.) */
#define WF_DEMO_QUIET_DEFAULT 1
#define WF_DEMO_SLEEP_US_DEFAULT 300
#include "workfarm/workfarm.c"
#include "workfarm/demo_integrate.c"
