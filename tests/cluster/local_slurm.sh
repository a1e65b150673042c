#!/usr/bin/env bash
# A one-node Slurm cluster on localhost for the cluster tests, started by hand (no systemd):
# munged, slurmctld and slurmd with their keys, sockets, state and logs under one directory, on
# free ports, as root. Sourced by slurm_test.sh:
#   slurm_start DIR   starts it and exports SLURM_CONF; returns 1 (saying why) if it cannot start
#   slurm_stop DIR    stops what slurm_start started
# The settings are those a cluster without cgroups needs: proctrack/linuxproc, task/none, no
# accounting, and jobs kept for an hour after they end so that their state can be read.

slurm_free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

slurm_stop() {
  local dir=$1 f
  for f in "$dir/run/slurmd.pid" "$dir/run/slurmctld.pid" "$dir/munge/munged.pid"; do
    [[ -s $f ]] || continue
    local pid
    pid=$(<"$f")
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  done
}

# Prints the last lines of the daemons' logs (on stderr).
slurm_logs() {
  local dir=$1 f
  for f in "$dir"/log/*.log; do
    echo "--- $f" >&2
    tail -n 20 "$f" >&2 || true
  done
}

slurm_start() {
  local dir=$1
  mkdir -p "$dir"/{munge,spool/ctld,spool/d,log,run}
  chmod 700 "$dir/munge"
  # munged refuses keys and sockets that others can read or write.
  dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none
  chmod 400 "$dir/munge/munge.key"
  if ! munged --force --socket="$dir/munge/munge.socket" --key-file="$dir/munge/munge.key" \
      --pid-file="$dir/munge/munged.pid" --log-file="$dir/log/munged.log" \
      --seed-file="$dir/munge/munged.seed" 2>"$dir/log/munged.start"; then
    echo "munged cannot start: $(cat "$dir/log/munged.start")" >&2
    return 1
  fi
  if ! munge -n --socket="$dir/munge/munge.socket" | unmunge --socket="$dir/munge/munge.socket" \
      >/dev/null 2>"$dir/log/munge.check"; then
    echo "munge cannot encode and decode a credential: $(cat "$dir/log/munge.check")" >&2
    return 1
  fi
  local ctld_port slurmd_port cpus mem
  ctld_port=$(slurm_free_port)
  slurmd_port=$(slurm_free_port)
  cpus=$(nproc)
  mem=$(awk '/^MemTotal:/ { m = int($2 / 1024) - 1024; print (m > 512 ? m : 512) }' /proc/meminfo)
  cat >"$dir/slurm.conf" <<CONF
ClusterName=sgtlocal
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$dir/spool/ctld
SlurmdSpoolDir=$dir/spool/d
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$dir/run/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
MinJobAge=3600
SchedulerParameters=sched_interval=2
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
CONF
  export SLURM_CONF=$dir/slurm.conf
  if ! slurmctld -f "$SLURM_CONF" 2>"$dir/log/slurmctld.start"; then
    echo "slurmctld cannot start: $(cat "$dir/log/slurmctld.start")" >&2
    slurm_logs "$dir"
    return 1
  fi
  if ! slurmd -f "$SLURM_CONF" -N localhost 2>"$dir/log/slurmd.start"; then
    echo "slurmd cannot start: $(cat "$dir/log/slurmd.start")" >&2
    slurm_logs "$dir"
    return 1
  fi
  local state=""
  for _ in $(seq 60); do
    state=$(sinfo -h -n localhost -o %t 2>/dev/null || true)
    [[ $state == idle ]] && return 0
    sleep 0.5
  done
  echo "the node did not come up (sinfo state '${state:-none}' after 30 s)" >&2
  slurm_logs "$dir"
  return 1
}
