# The cluster recipes of tools/cluster: the Slurm one submitted to a one-node Slurm cluster that
# the test starts on this machine (label slurm; it skips, saying why, only where Slurm or munge
# cannot start), the script both recipes share (shards.sh: the shards' marks and the merge's
# refusals, with no scheduler), and the Kubernetes manifests against the batch/v1 Job schema (no
# cluster).
# tools/cluster/install-test-deps.sh installs what both need; .ci/run calls it.
find_program(SGT_BASH bash)
if(TARGET sgemm-tune AND SGT_BASH)
  add_test(NAME Cluster.SlurmArrayThenMergeEqualsOneProcess
           COMMAND ${SGT_BASH} ${CMAKE_CURRENT_SOURCE_DIR}/cluster/slurm_test.sh
                   $<TARGET_FILE:sgemm-tune> ${PROJECT_SOURCE_DIR})
  set_tests_properties(Cluster.SlurmArrayThenMergeEqualsOneProcess PROPERTIES LABELS slurm
                       SKIP_RETURN_CODE 77 TIMEOUT 900)
  # Runs shards as a launcher would start them, replaying recordings: no GPU, no scheduler.
  add_test(NAME Cluster.MergeRefusesPartialOrMixedRuns
           COMMAND ${SGT_BASH} ${CMAKE_CURRENT_SOURCE_DIR}/cluster/shards_test.sh
                   $<TARGET_FILE:sgemm-tune> ${PROJECT_SOURCE_DIR})
  set_tests_properties(Cluster.MergeRefusesPartialOrMixedRuns PROPERTIES LABELS cpu TIMEOUT 300)
  # The Python of build/cluster-venv (where install-test-deps.sh puts kubernetes-validate), else
  # the one on PATH.
  add_test(NAME Cluster.KubernetesManifestsMatchTheJobSchema
           COMMAND ${SGT_BASH} -c
                   "py=\"$0/cluster-venv/bin/python3\"; [ -x \"$py\" ] || py=python3; exec \"$py\" \"$1\" \"$2\""
                   ${PROJECT_BINARY_DIR} ${CMAKE_CURRENT_SOURCE_DIR}/cluster/validate_k8s.py
                   ${PROJECT_SOURCE_DIR}/tools/cluster/k8s)
  set_tests_properties(Cluster.KubernetesManifestsMatchTheJobSchema PROPERTIES LABELS cpu
                       SKIP_RETURN_CODE 77 TIMEOUT 120)
endif()
