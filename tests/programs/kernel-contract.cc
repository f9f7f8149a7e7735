// Exercises the whole SimulatorImpl contract and prints a transcript; the
// test runs it under both kernels and requires identical transcripts.
#include "ns3/core-module.h"

#include <iostream>
#include <thread>

using namespace ns3;

static EventId g_victim;
static EventId g_removed;
static EventId g_destroyed;
static EventId g_destroyCancelled;

static void
Log(const std::string& what)
{
    std::cout << Simulator::Now().GetTimeStep() << " ctx=" << Simulator::GetContext() << " "
              << what << "\n";
}

static void
Victim()
{
    Log("victim ran (must not happen)");
}

static void
Chain(int left)
{
    Log("chain " + std::to_string(left));
    if (left > 0)
    {
        Simulator::Schedule(NanoSeconds(7 * left), &Chain, left - 1);
        Simulator::ScheduleNow(&Log, std::string("now-event ") + std::to_string(left));
    }
}

static void
Probe()
{
    Log("probe victim expired=" + std::to_string(Simulator::IsExpired(g_victim)) +
        " left=" + std::to_string(Simulator::GetDelayLeft(g_victim).GetTimeStep()));
    Simulator::Cancel(g_victim);
    Log("after cancel expired=" + std::to_string(Simulator::IsExpired(g_victim)));
    Simulator::Remove(g_removed);
    Log("removed expired=" + std::to_string(Simulator::IsExpired(g_removed)));
    Log("destroy expired=" + std::to_string(Simulator::IsExpired(g_destroyed)) +
        " destroy-cancelled expired=" + std::to_string(Simulator::IsExpired(g_destroyCancelled)));
}

static void
FromOtherThread()
{
    // ScheduleWithContext from a non-simulation thread is legal; the kernel
    // must pick the event up after the current one.
    std::thread t([] {
        Simulator::ScheduleWithContext(42, MicroSeconds(3), &Log, std::string("from thread"));
    });
    t.join();
    Log("thread joined");
}

int
main(int argc, char* argv[])
{
    CommandLine cmd(__FILE__);
    cmd.Parse(argc, argv);
    std::cout << "max " << Simulator::GetMaximumSimulationTime().GetTimeStep() << "\n";

    g_victim = Simulator::Schedule(MicroSeconds(50), &Victim);
    g_removed = Simulator::Schedule(MicroSeconds(60), &Victim);
    Simulator::Schedule(MicroSeconds(10), &Probe);
    Simulator::ScheduleWithContext(7, MicroSeconds(5), &Chain, 4);
    Simulator::ScheduleWithContext(9, MicroSeconds(5), &Log, std::string("same time, later uid"));
    Simulator::Schedule(MicroSeconds(20), &FromOtherThread);
    g_destroyed = Simulator::ScheduleDestroy(&Log, std::string("destroy event"));
    g_destroyCancelled = Simulator::ScheduleDestroy(&Log, std::string("cancelled destroy (must not run)"));
    Simulator::Cancel(g_destroyCancelled);
    for (int i = 0; i < 1000; ++i)
    {
        Simulator::Schedule(NanoSeconds(100 + (i * 7919) % 997), &Log, "burst " + std::to_string(i));
    }
    EventId stopAt = Simulator::Stop(MicroSeconds(40));
    std::cout << "stop event ts " << stopAt.GetTs() << "\n";
    Simulator::Run();
    Log("stopped; finished=" + std::to_string(Simulator::IsFinished()));
    // Run resumes after Stop: the remaining victim was cancelled, so nothing of it runs.
    Simulator::Run();
    Log("drained; finished=" + std::to_string(Simulator::IsFinished()));
    std::cout << "events " << Simulator::GetEventCount() << "\n";
    Simulator::Destroy();
    std::cout << "destroyed\n";
    return 0;
}
