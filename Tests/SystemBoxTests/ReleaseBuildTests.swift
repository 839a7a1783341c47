import EarshotTestHarness
import Foundation
import Testing

/// The release build as `deploy/install` shipped it into the box, checked for its
/// structure: what each service links, what it exports, which Foundation it carries, and
/// what it holds in memory once started.
@Suite(.serialized, .enabled(if: BoxScenario.isBooted, "runs inside deploy/earshot-dev test-system"), .journalOnFailure)
struct ReleaseBuildTests {
    /// The shared libraries each service names (`DT_NEEDED`): the C libraries it calls at
    /// every start. Everything it uses only for some work (libsndfile, espeak-ng,
    /// PipeWire, FFmpeg) is opened when that work comes; the Swift runtime and Foundation
    /// are linked in, and the C++ runtime they need is the system's.
    static let needed: [String: Set<String>] = {
        let everyone: Set<String> = ["libdbus-1.so.3", "libstdc++.so.6", "libm.so.6", "libgcc_s.so.1", "libc.so.6", "ld-linux-x86-64.so.2"]
        let own: [String: Set<String>] = [
            // libsamplerate: what alerts played of a barge-in prompt, brought to the pass-thru's rate for the canceller.
            "capture": ["libspeexdsp.so.1", "libasound.so.2", "libsamplerate.so.0"],
            "alerts": ["libasound.so.2", "libsamplerate.so.0"],
            "session": ["libasound.so.2"],
            "pieces": ["libnettle.so.8", "libebur128.so.1", "libsqlite3.so.0"],
            "orchestrator": ["libspeexdsp.so.1"],
        ]
        return own.mapValues { $0.union(everyone) }
    }()

    /// Libraries that must never be named: opened on demand, or linked in.
    static let neverNeeded: [String] = ["libsndfile", "libespeak-ng", "libpipewire", "libavcodec", "libavformat", "libavutil", "libswresample",
                              "libwebrtc_audio_processing",
                              "libswiftCore", "libFoundation", "libdispatch", "libicu"]

    /// Idle memory once started (KiB): the service's share of what is resident (PSS: a page
    /// mapped by n processes counts 1/n), and its anonymous memory (RssAnon), which only it
    /// holds. VmRSS is not bounded: most of it is clean pages of libc, libstdc++ and
    /// libasound, shared with every process, and how many of them a process has mapped is the
    /// kernel's choice (a fault maps the neighbouring pages that are in the page cache), not
    /// the service's: in one box the same session measured 14.2–15.0 MiB with those libraries
    /// out of the cache and 16.3–17.0 with them in, at PSS 11.8–12.6 and 12.6–13.3 MiB and
    /// the same anonymous memory (2.2 MiB). A service attached to PipeWire (the session, on a head unit) also
    /// maps libpipewire and the SPA plugins it opens.
    static func idleLimits(_ service: String, onPipeWire: Bool) -> (proportional: Int, anonymous: Int) {
        let mebibyte = 1024
        if service == "pieces" { return (proportional: 20 * mebibyte, anonymous: 4 * mebibyte) }
        return (proportional: (onPipeWire ? 14 : 12) * mebibyte, anonymous: 3 * mebibyte)
    }

    static func binary(_ service: String) -> String { BoxScenario.box.file("usr/local/bin/earshot-\(service)").path }

    @Test func eachServiceNamesOnlyTheLibrariesItsDesignNames() async throws {
        for service in ServiceLifeTests.services {
            let dynamic = try await ToolRun.run(["readelf", "-d", "-W", Self.binary(service)])
            var needed = Set<String>()
            for line in dynamic.split(separator: "\n") where line.contains("(NEEDED)") {
                if let name = line.split(separator: "[").last?.split(separator: "]").first { needed.insert(String(name)) }
            }
            let expected = try #require(Self.needed[service])
            #expect(needed == expected, """
                earshot-\(service) names \(needed.subtracting(expected).sorted()) beyond its design \
                and lacks \(expected.subtracting(needed).sorted())
                """)
            for library in Self.neverNeeded {
                #expect(!needed.contains { $0.hasPrefix(library) }, "earshot-\(service) names \(library)")
            }
        }
    }

    /// The plugins installed beside the services are C (and C++): nothing of Swift in what
    /// they name or leave for the loader to find, so that they load into a service, which
    /// links the Swift runtime into itself and exports none of it.
    @Test func thePluginsHoldNothingOfSwift() async throws {
        for plugin in ["libEarshotAACEncoder.so", "libEarshotSpeechProcessing.so"] {
            let path = BoxScenario.box.file("usr/local/lib/earshot/\(plugin)").path
            let dynamic = try await ToolRun.run(["readelf", "-d", "-W", path])
            let needed = dynamic.split(separator: "\n").filter { $0.contains("(NEEDED)") }
            #expect(!needed.isEmpty, "\(plugin) names no library")
            for library in ["libswift", "libFoundation", "libdispatch"] {
                #expect(!needed.contains { $0.contains(library) }, "\(plugin) names \(library)")
            }
            let undefined = try await ToolRun.run(["nm", "-D", "--undefined-only", path])
            #expect(!undefined.contains("swift_"), "\(plugin) wants symbols of the Swift runtime")
        }
    }

    /// The installed earshot-alerts speaks through the helper installed beside it: a spoken
    /// alert completes with SUCCESS (with the helper missing or failing it would be
    /// WARNINGS), the helper runs as the service's child while the service maps nothing of
    /// libespeak-ng's, and it is gone (waited for) once the service has been quiet.
    @Test func theInstalledAlertsSpeaksThroughItsHelper() async throws {
        let box = BoxScenario.box
        let said = try await box.run("earshot alert --system --wait --timeout 3 --speak 'Door open' 'Door'", as: "app",
                                     timeout: .seconds(30))
        #expect(said.contains("SUCCESS"), "\(said)")
        let service = try await box.run("systemctl show -P MainPID earshot-alerts").trimmingCharacters(in: .whitespacesAndNewlines)
        let helpers = try await box.run("pgrep -P \(service) -x earshot-speak || true")
        #expect(!helpers.isEmpty, "no earshot-speak under earshot-alerts (\(service)) after it spoke")
        let maps = try await box.run("cat /proc/\(service)/maps")
        for library in ["libespeak-ng", "libpcaudio", "libpulse"] { #expect(!maps.contains(library), "earshot-alerts maps \(library)") }
        // Quiet: no call for a trim interval (10 s) after one with calls.
        let deadline = ContinuousClock.now + .seconds(40)
        var left = helpers
        while !left.isEmpty, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(500))
            left = try await box.run("pgrep -P \(service) earshot-speak || true")
        }
        #expect(left.isEmpty, "earshot-speak still under earshot-alerts 40 s after the alert: \(left)")
    }

    @Test func noServiceExportsASymbol() async throws {
        for service in ServiceLifeTests.services {
            let exported = try await ToolRun.run(["nm", "-D", "--defined-only", Self.binary(service)])
                .split(separator: "\n").filter { !$0.isEmpty }
            #expect(exported.isEmpty, "earshot-\(service) exports \(exported.count) symbols: \(exported.prefix(5))")
        }
    }

    /// The four small services carry FoundationEssentials only: no module of the whole
    /// Foundation (its internationalization, which brings ICU's data) is in them.
    @Test func theSmallServicesCarryNoWholeFoundation() async throws {
        for service in ["capture", "alerts", "session", "orchestrator"] {
            let bytes = try Data(contentsOf: URL(fileURLWithPath: Self.binary(service)))
            #expect(bytes.range(of: Data("FoundationInternationalization".utf8)) == nil,
                    "earshot-\(service) carries the whole Foundation")
        }
    }

    /// Each service, started by systemd as installed and left idle for a second, within its
    /// idle memory; the session attached to the box's PipeWire. Measured in one condition:
    /// the graph holds no stream (an earlier scenario's stream still closing is work for the
    /// session, not idleness), and the files the service maps are in the page cache, as on a
    /// head unit that has run a while.
    @Test func eachServiceStartsWithinItsIdleMemory() async throws {
        let box = BoxScenario.box
        try await Self.waitForAQuietGraph()
        var figures: [String] = []
        for service in ServiceLifeTests.services {
            let unit = "earshot-\(service)"
            let running = try await box.run("systemctl show -P MainPID \(unit)").trimmingCharacters(in: .whitespacesAndNewlines)
            try await box.run("{ echo /usr/local/bin/\(unit); "
                              + "awk '$6 ~ /^\\// {print $6}' /proc/\(running)/maps 2>/dev/null; } | sort -u | xargs -r cat > /dev/null")
            try await box.run("systemctl restart \(unit)")
            // A second after it is ready. Waited for longer, whatever the service does next brings
            // more of its binary in (a fault maps 64 KiB): an orchestrator measured once its
            // memory had settled held 16.4 MiB, against 12-13 a second after its start.
            try await Task.sleep(for: .seconds(1))
            let pid = try await box.run("systemctl show -P MainPID \(unit)").trimmingCharacters(in: .whitespacesAndNewlines)
            let status = try await box.run("cat /proc/\(pid)/status /proc/\(pid)/smaps_rollup")
            func kibibytes(_ field: String) -> Int? {
                status.split(separator: "\n").first { $0.hasPrefix(field + ":") }?
                    .split(separator: " ", omittingEmptySubsequences: true).dropFirst().first.flatMap { Int($0) }
            }
            func mebibytes(_ field: String) -> String {
                guard let value = kibibytes(field) else { return "?" }
                return "\(value / 1024).\(value % 1024 * 10 / 1024)"
            }
            let proportional = try #require(kibibytes("Pss")), anonymous = try #require(kibibytes("RssAnon"))
            let onPipeWire = try await box.run("cat /proc/\(pid)/maps").contains("libpipewire-0.3")
            let limits = Self.idleLimits(service, onPipeWire: onPipeWire)
            figures.append("\(service) " + ["Pss", "RssAnon", "VmRSS", "RssFile"].map(mebibytes).joined(separator: "/") + " MiB"
                           + (onPipeWire ? " (on PipeWire)" : ""))
            if proportional > limits.proportional || anonymous > limits.anonymous {
                // For whoever reads a failure: the files (or kinds of mapping) that hold the most.
                let largest = try await box.run("awk '/^[0-9a-f]+-/ {name = NF >= 6 ? $6 : \"[anonymous]\"} /^Pss:/ {pss[name] += $2} END {for (n in pss) print pss[n], n}' /proc/\(pid)/smaps | sort -n -r | head -12")
                print("\(unit): largest mappings (PSS, KiB):\n" + largest)
            }
            #expect(proportional <= limits.proportional, "\(unit): PSS \(proportional) KiB, at most \(limits.proportional)")
            #expect(anonymous <= limits.anonymous, "\(unit): RssAnon \(anonymous) KiB, at most \(limits.anonymous)")
        }
        print("idle memory (PSS/RssAnon/VmRSS/RssFile): " + figures.joined(separator: ", "))
    }

    /// Until no stream node is left in the box's graph (at most 10 s), or fails naming them.
    /// The head unit's own stream, the echo reference's loopback from the speakers' monitor
    /// (always there), is not counted.
    static func waitForAQuietGraph() async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        var streams: [String] = []
        repeat {
            let json = try await BoxScenario.box.run("pw-dump")
            let objects = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [[String: Any]] ?? []
            streams = objects.compactMap { object in
                guard object["type"] as? String == "PipeWire:Interface:Node",
                      let props = (object["info"] as? [String: Any])?["props"] as? [String: Any],
                      (props["media.class"] as? String)?.hasPrefix("Stream/") == true,
                      props["node.name"] as? String != "earshot.echo-reference.monitor" else { return nil }
                return "\(props["node.name"] ?? "?") (\(props["application.process.binary"] ?? "?"))"
            }
            if streams.isEmpty { return }
            try await Task.sleep(for: .milliseconds(100))
        } while ContinuousClock.now < deadline
        Issue.record("streams still in the graph after 10 s: \(streams)")
    }
}
