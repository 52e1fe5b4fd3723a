/* oxmpi-test: ranks=1 modes=processes env=OXMPI_UNIVERSE_SIZE=8 mpich=skip expect-exit=137 timeout=60 */
/* oxmpi-test: expect-stderr="of spawned job 1" expect-stderr="killed by signal 9" */
/* oxmpi-test: expect-stdout="reassigned: " expect-stdout="result: " */
/* The work farm started by spawning (workfarm_spawn) survives the death of a spawned worker:
   leaf rank 3 of the farm (a spawned node) kills itself with SIGKILL while computing its items;
   its parent, rank 1, takes it as lost and the server still gets the exact sum, with the lost
   items reassigned. Processes mode only: in threads mode SIGKILL ends every rank. */
#define WF_DEMO_CONFIG_DEFAULT "spawn_tree.conf"
#define WF_DEMO_DIE_RANK_DEFAULT 3
#define WF_DEMO_DIE_AFTER_DEFAULT 3
#define WF_DEMO_SLEEP_US_DEFAULT 2000
#include "workfarm/workfarm.c"
#include "workfarm/demo_integrate.c"
