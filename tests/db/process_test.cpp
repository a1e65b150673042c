// The store across processes: a tune killed mid-write loses no committed trial and resumes from
// them; two tunes writing one database at once lose no rows.
#include <gtest/gtest.h>

#include <csignal>
#include <cstdio>
#include <set>
#include <sys/wait.h>
#include <unistd.h>

#include "db_test_util.hpp"
#include "test_support.hpp"

namespace sgt::db {
namespace {

using test::make_trial;
using test::shape;
using test::TempDir;

// Reads exactly one int from a pipe; false at end of file.
bool read_int(int fd, int& v) {
  char* p = reinterpret_cast<char*>(&v);
  size_t got = 0;
  while (got < sizeof v) {
    const ssize_t n = ::read(fd, p + got, sizeof v - got);
    if (n <= 0) return false;
    got += static_cast<size_t>(n);
  }
  return true;
}

TEST(Process, KilledWriterLosesNoCommittedTrialAndResumes) {
  TempDir dir;
  const auto path = dir.path() / "tuning.db";
  const auto p = shape(2048, 2048, 2048);
  SqliteStore::open(path,
                    OpenMode::read_write);  // created before the fork; no open handle crosses it

  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::close(fds[0]);
    try {
      auto store = SqliteStore::open(path, OpenMode::read_write);
      store.begin(test::h200(), p);
      for (int i = 0; i < 1'000'000; ++i) {
        store.record(make_trial(p, i, 1.0 + i * 1e-3));
        // Reported only after record() returned, i.e. after the commit.
        if (::write(fds[1], &i, sizeof i) != static_cast<ssize_t>(sizeof i)) _exit(4);
      }
    } catch (const std::exception& e) {
      std::fprintf(stderr, "child: %s\n", e.what());
      _exit(3);
    }
    _exit(0);
  }
  ::close(fds[1]);
  constexpr size_t kAtLeast = 40;
  std::vector<int> committed;
  int v;
  while (committed.size() < kAtLeast && read_int(fds[0], v)) committed.push_back(v);
  ::kill(pid, SIGKILL);
  while (read_int(fds[0], v)) committed.push_back(v);
  ::close(fds[0]);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
      << "the child ended on its own (status " << status << ")";
  ASSERT_GE(committed.size(), kAtLeast);

  auto store = SqliteStore::open(path, OpenMode::read_write);
  EXPECT_EQ(store.integrity_check(), "ok");
  const auto all = store.trials();
  EXPECT_GE(all.size(), committed.size());
  EXPECT_LE(all.size(), committed.size() + 1);  // at most the one in flight at the kill
  store.begin(test::h200(), p);
  for (int i : committed) {
    const auto expected = make_trial(p, i, 1.0 + i * 1e-3);
    const auto back = store.finished(expected.config_name, expected.kernel_hash);
    ASSERT_TRUE(back) << "committed trial " << i << " is missing";
    EXPECT_EQ(test::as_json(*back), test::as_json(expected));
  }
  // The resumed run carries on writing.
  store.record(make_trial(p, 5'000'000, 3.0));
  EXPECT_EQ(store.trials().size(), all.size() + 1);
}

TEST(Process, ConcurrentWritersLoseNoRows) {
  TempDir dir;
  const auto path = dir.path() / "tuning.db";
  const auto p = shape(1024, 1024, 1024);
  constexpr int kPerWriter = 200;
  SqliteStore::open(path, OpenMode::read_write);

  int go[2];
  ASSERT_EQ(pipe(go), 0);
  std::vector<pid_t> kids;
  for (int w = 0; w < 2; ++w) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::close(go[1]);
      try {
        auto store = SqliteStore::open(path, OpenMode::read_write);
        store.begin(test::h200(), p);
        char c;
        (void)::read(go[0], &c, 1);  // both start when the parent closes the pipe
        for (int i = 0; i < kPerWriter; ++i) {
          // Both writers use the same configs (racing on the configs table); the seed tells the
          // measurements apart.
          auto t = make_trial(p, i, 1.0 + w);
          t.seed = static_cast<std::uint64_t>(w);
          store.record(t);
        }
      } catch (const std::exception& e) {
        std::fprintf(stderr, "writer %d: %s\n", w, e.what());
        _exit(3);
      }
      _exit(0);
    }
    kids.push_back(pid);
  }
  ::close(go[0]);
  ::close(go[1]);
  for (pid_t pid : kids) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
  }

  auto store = SqliteStore::open(path, OpenMode::read_only);
  EXPECT_EQ(store.integrity_check(), "ok");
  const auto all = store.trials();
  EXPECT_EQ(all.size(), 2u * kPerWriter);
  std::set<std::pair<std::string, std::uint64_t>> distinct;
  for (const auto& t : all) distinct.insert({t.trial.config_name, t.trial.seed});
  EXPECT_EQ(distinct.size(), 2u * kPerWriter);
  EXPECT_EQ(test::count_rows(path, "SELECT count(*) FROM configs"), kPerWriter);
  EXPECT_EQ(test::count_rows(path, "SELECT count(*) FROM gpus"), 1);
}

}  // namespace
}  // namespace sgt::db
