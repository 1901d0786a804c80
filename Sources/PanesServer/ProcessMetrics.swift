import Foundation
import PanesCore

/// The standard `process_*` metrics, read from /proc: CPU used (so idle cost is visible from
/// outside), resident memory, open files and start time.
enum ProcessMetrics {
    static func render(into text: inout PrometheusText) {
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        let page = Double(sysconf(Int32(_SC_PAGESIZE)))
        if let stat = try? String(contentsOfFile: "/proc/self/stat", encoding: .utf8),
           let close = stat.lastIndex(of: ")")
        {
            // Fields after the command name, which may hold spaces: state is field 3, utime 14,
            // stime 15, starttime 22 (1-based, as in proc(5)).
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            if fields.count > 19, let user = Double(fields[11]), let system = Double(fields[12]),
               let start = Double(fields[19])
            {
                text.gauge("process_cpu_seconds_total", "User and system CPU time spent, in seconds.",
                           real: (user + system) / ticks, type: "counter")
                if let boot = bootTime() {
                    text.gauge("process_start_time_seconds", "Start time of the process since the Unix epoch, in seconds.",
                               real: boot + start / ticks)
                }
            }
        }
        if let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) {
            let fields = statm.split(separator: " ")
            if fields.count > 1, let resident = Double(fields[1]) {
                text.gauge("process_resident_memory_bytes", "Resident memory size, in bytes.", real: resident * page)
            }
        }
        if let open = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") {
            text.gauge("process_open_fds", "Open file descriptors.", [([:], open.count)])
        }
    }

    private static func bootTime() -> Double? {
        guard let stat = try? String(contentsOfFile: "/proc/stat", encoding: .utf8) else { return nil }
        for line in stat.split(separator: "\n") where line.hasPrefix("btime ") {
            return Double(line.dropFirst(6).trimmingCharacters(in: .whitespaces))
        }
        return nil
    }
}
