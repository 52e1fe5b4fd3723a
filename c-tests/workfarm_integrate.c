/* oxmpi-test: ranks=1,2,3,5,8 timeout=60 */
/* oxmpi-test: env-matrix="WORKFARM_ARGS=--fanout 2|--fanout 1 --threads 1|--fanout 7 --threads 3" */
/* The work farm of c-tests/workfarm (seed 001) on k-ary trees: a chain, a binary tree, a star.
   The demo checks the integer sum against its closed form, that every item arrived once and
   that nothing was reassigned; it prints nothing on success. */
#define WF_DEMO_QUIET_DEFAULT 1
#include "workfarm/workfarm.c"
#include "workfarm/demo_integrate.c"
