// swift-tools-version:6.1
import PackageDescription

/// How each service executable is linked: by lld, with the relative relocations of a
/// position-independent executable packed (DT_RELR, glibc 2.36 or later). The packed
/// table is a few KiB where the plain one is about 1 MiB, which the loader reads at every
/// start (docs/benchmarks.md, footprint).
///
/// Release builds export no symbols from the executable: the static Swift runtime's link
/// arguments would export all of them (`-export-dynamic`), which made earshot-pieces'
/// dynamic symbol table 3.5 MB that the loader searched while binding every library
/// (about 2 MiB of VmRSS). Nothing loaded into a service binds to its symbols: its plugins
/// are C (Sources/Plugins).
///
/// Release builds also add to lld's default layout (`deploy/release-layout.ld`): the PLT,
/// `.init` and the compiler's private functions in front of the code, Foundation's ICU data
/// after it. `deploy/release-build` adds the link order it profiles from the same build and
/// checks that both applied.
let serviceLinking: [LinkerSetting] = [
    .unsafeFlags(["-use-ld=lld", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs"]),
    .unsafeFlags(["-Xlinker", "--no-export-dynamic",
                  "-Xlinker", "-T", "-Xlinker", "\(Context.packageDirectory)/deploy/release-layout.ld"], .when(configuration: .release)),
]

/// How the programs written in C are linked: without the Swift runtime's start-up object,
/// which registers an image's Swift metadata (C code has none), and with the static Swift
/// runtime named instead of libswiftCore.so, of which C code then takes nothing: a program
/// so built has no Swift in it at all. (It does name libstdc++.so.6, which swiftc adds to
/// every link ahead of anything a package can pass, though it takes nothing from it.)
/// Only executables, which no package depends on, are linked so; the plugins that services
/// load are not built by SwiftPM at all (Sources/Plugins/Makefile).
let cOnlyLinking: [LinkerSetting] = [.unsafeFlags(["-nostartfiles", "-static-stdlib"])]

let package = Package(
    name: "Earshot",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "EarshotDBus", targets: ["EarshotDBus"]),
        .library(name: "EarshotService", targets: ["EarshotService"]),
        .library(name: "EarshotClient", targets: ["EarshotClient"]),
        .executable(name: "earshot-capture", targets: ["earshot-capture"]),
        .executable(name: "earshot-alerts", targets: ["earshot-alerts"]),
        .executable(name: "earshot-session", targets: ["earshot-session"]),
        .executable(name: "earshot-pieces", targets: ["earshot-pieces"]),
        .executable(name: "earshot-orchestrator", targets: ["earshot-orchestrator"]),
        .executable(name: "earshot", targets: ["earshot"]),
        .executable(name: "earshot-echo", targets: ["earshot-echo"]),
        .executable(name: "earshot-bench", targets: ["earshot-bench"]),
        .executable(name: "earshot-capture-loop", targets: ["earshot-capture-loop"]),
        .executable(name: "earshot-open-as", targets: ["earshot-open-as"]),
        .executable(name: "earshot-speak", targets: ["earshot-speak"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        // TLS to the shared catalogue's server (postgres-nio's own TLS library).
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
    ],
    targets: [
        // C libraries from the system, found through pkg-config.
        .systemLibrary(name: "CDBus", pkgConfig: "dbus-1",
                       providers: [.apt(["libdbus-1-dev"])]),
        .systemLibrary(name: "CGlibcExtras", path: "Sources/CGlibcExtras"),
        .systemLibrary(name: "CALSA", pkgConfig: "alsa",
                       providers: [.apt(["libasound2-dev"])]),
        .systemLibrary(name: "CSpeexDSP", pkgConfig: "speexdsp",
                       providers: [.apt(["libspeexdsp-dev"])]),
        // Audio files and resampling for the alert voice (speech is earshot-speak's).
        .systemLibrary(name: "CSndFile", pkgConfig: "sndfile",
                       providers: [.apt(["libsndfile1-dev"])]),
        // libsndfile for the services: opened at the first audio file and closed once
        // quiet, not linked (it brings seven codec libraries); <sndfile.h> for its types.
        .target(name: "CSndFileLoader"),
        .systemLibrary(name: "CSampleRate", pkgConfig: "samplerate",
                       providers: [.apt(["libsamplerate0-dev"])]),

        // Loudness and SHA-256 for the piece store.
        .systemLibrary(name: "CEbur128", pkgConfig: "libebur128",
                       providers: [.apt(["libebur128-dev"])]),
        // SHA-256: Nettle, whose digests need no global initialisation (libgcrypt's, at
        // the first digest, kept 0.5 MiB more of its code resident).
        .systemLibrary(name: "CNettle", pkgConfig: "nettle",
                       providers: [.apt(["nettle-dev"])]),
        // The system mixer: libpipewire-0.3 (libpipewire-0.3-dev's headers), wrapped in C
        // where its API is macros, and opened when the first mixer is made instead of
        // linked: a session with no daemon to attach to maps none of it.
        .target(name: "CPipeWireMixer", cSettings: [.unsafeFlags(["-I/usr/include/pipewire-0.3", "-I/usr/include/spa-0.2", "-D_REENTRANT"])]),
        // PipeWire's echo canceller (its SPA plugin, opened with dlopen) for the echo
        // benchmark's peer: SPA's interface is macros, so it is driven from C.
        .target(name: "CSpaEchoCancel", cSettings: [.unsafeFlags(["-I/usr/include/spa-0.2"])]),
        // A PipeWire client on its own thread loop: follows streams, sinks, sources and
        // defaults, and sets stream volumes.
        .target(name: "EarshotPipeWire", dependencies: ["CPipeWireMixer", "EarshotSync"]),

        // The one lock every module uses (pthread-based, visible to ThreadSanitizer).
        .target(name: "EarshotSync", dependencies: ["CGlibcExtras"]),
        // The capture reading thread's loop for reads that go straight to pipes (CaptureLoop).
        .target(name: "CCapturePump"),
        // ALSA access shared by the services: devices, formats, capture and playback threads.
        .target(name: "EarshotALSA", dependencies: ["CALSA", "CCapturePump", "EarshotSync"]),
        // The alert voice: espeak-ng speech, phoneme tables, jingles, audio files to mono PCM.
        .target(name: "EarshotVoice", dependencies: ["ContractCore", "EarshotSync", "CSndFileLoader", "CSampleRate"]),
        // Speech by libespeak-ng in a process of its own, which the services that speak
        // start at their first speech and end once quiet: what libespeak-ng brings
        // (libpcaudio, PulseAudio's client libraries, never unloaded once loaded) then never
        // enters a service. C, with no Swift in it (`cOnlyLinking`).
        .executableTarget(name: "earshot-speak", linkerSettings: [.linkedLibrary("espeak-ng")] + cOnlyLinking + [.unsafeFlags(["-use-ld=lld"])]),

        // Audio files for the piece store: analysis (libsndfile, libebur128), transcoding
        // (libsndfile; AAC in M4A through FFmpeg's libraries, in the plugin
        // libEarshotAACEncoder.so of Sources/Plugins, whose dependencies (codecs, TLS, image
        // and network libraries) a service should not map at every start: loaded at the
        // first AAC export), SHA-256 (Nettle), cover image dimensions.
        // True peak by a polyphase interpolator of its own: FFmpeg's resampler would bring
        // libavutil and with it some twenty libraries (VA-API, VDPAU, X11, OpenCL, libmfx,
        // libstdc++, which no process can unload) into every service that measures a drop.
        .target(name: "CTruePeak"),
        .target(name: "EarshotMedia", dependencies: ["CSndFileLoader", "CEbur128", "CTruePeak", "CNettle", "EarshotSync"]),

        // The contract's shared vocabulary: result codes, text rules, speech chunks.
        .target(name: "ContractCore"),

        // Echo cancellation and noise suppression for capture: WebRTC's audio processing
        // module (C++; the engine of PipeWire's echo-cancel), behind a C API in the plugin
        // libEarshotSpeechProcessing.so of Sources/Plugins (it brings libstdc++ and the
        // module, 1-2 MiB, into a process that uses it), and the Swift side, which loads
        // the plugin and never links it.
        .target(name: "EarshotSpeechProcessing", dependencies: ["EarshotSync"]),

        // The capture service: its domain core (no D-Bus, no ALSA) and its executable.
        .target(name: "CaptureCore", dependencies: ["ContractCore", "CSpeexDSP"]),
        // Opening a file with a bus caller's file-system identity: on one thread (fsuid), or
        // through earshot-open-as; and the helper itself, which systemd starts per connection
        // with CAP_SETUID and CAP_SETGID only (deploy/systemd/system/earshot-open-as*).
        .target(name: "CFileAccess"),
        .target(name: "CallerFiles", dependencies: ["CFileAccess"]),
        .executableTarget(name: "earshot-open-as", dependencies: ["CFileAccess", "CDBus"],
                          linkerSettings: cOnlyLinking + [.unsafeFlags(["-use-ld=lld"])]),
        .executableTarget(name: "earshot-capture", dependencies: [
            "CaptureCore", "EarshotSpeechProcessing", "EarshotVoice", "ContractCore", "EarshotContract", "EarshotALSA", "EarshotDBus", "EarshotService", "EarshotClient", "CallerFiles",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
            .product(name: "Logging", package: "swift-log"),
        ], linkerSettings: serviceLinking),

        // The alert presenter: its domain core (no D-Bus, no audio) and its executable.
        .target(name: "AlertsCore", dependencies: ["ContractCore"]),
        .executableTarget(name: "earshot-alerts", dependencies: [
            "AlertsCore", "ContractCore", "EarshotClient", "EarshotContract", "EarshotALSA", "EarshotDBus", "EarshotService", "EarshotVoice",
            "CSndFileLoader", "CallerFiles",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
            .product(name: "Logging", package: "swift-log"),
        ], linkerSettings: serviceLinking),

        // The audio session: its domain core (vocabulary, rules, ordered apply, audio focus)
        // and its executable (ALSA inputs, route watching, the state file).
        .target(name: "SessionCore", dependencies: ["ContractCore"]),
        .executableTarget(name: "earshot-session", dependencies: [
            "SessionCore", "ContractCore", "EarshotContract", "EarshotALSA", "EarshotDBus", "EarshotPipeWire", "EarshotService", "EarshotSync",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
            .product(name: "Logging", package: "swift-log"),
        ], linkerSettings: serviceLinking),

        // The piece store: its domain core (Allihoopa's rules, queries), the store (SQLite
        // through GRDB, content-addressed files) and the executable.
        .target(name: "PiecesCore", dependencies: ["ContractCore"]),
        .target(name: "PieceStore", dependencies: [
            "PiecesCore", "ContractCore", "EarshotMedia", "EarshotSync", .product(name: "GRDB", package: "GRDB.swift"),
        ]),
        // The shared catalogue: the same store on a PostgreSQL server many hosts use.
        .target(name: "PostgresPieceStore", dependencies: [
            "PieceStore", "PiecesCore", "ContractCore", "EarshotMedia", "EarshotSync", "CNettle",
            .product(name: "PostgresNIO", package: "postgres-nio"),
            .product(name: "NIOSSL", package: "swift-nio-ssl"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        .executableTarget(name: "earshot-pieces", dependencies: [
            "PiecesCore", "PieceStore", "PostgresPieceStore", "ContractCore", "EarshotContract", "EarshotMedia", "EarshotDBus", "EarshotService",
            "EarshotSync", "CSndFileLoader", "CallerFiles",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
            .product(name: "Logging", package: "swift-log"),
        ], linkerSettings: serviceLinking),

        // The orchestrator's domain core: the RecordPiece job as a state machine.
        .target(name: "OrchestratorCore", dependencies: ["ContractCore", "EarshotContract"]),
        .executableTarget(name: "earshot-orchestrator", dependencies: [
            "OrchestratorCore", "CaptureCore", "PiecesCore", "ContractCore", "EarshotClient", "EarshotContract", "EarshotDBus", "EarshotService", "EarshotSync",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
            .product(name: "Logging", package: "swift-log"),
        ], linkerSettings: serviceLinking),

        // The command-line client for every service.
        .executableTarget(name: "earshot", dependencies: [
            "ContractCore", "EarshotClient", "EarshotContract", "EarshotDBus", "EarshotService",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ]),

        // Interfaces as data (members, signatures, documentation) and their introspection XML.
        .target(name: "DBusDeclarations"),
        // Every Earshot service's bus name, paths and interfaces, declared once.
        .target(name: "EarshotContract", dependencies: ["ContractCore", "DBusDeclarations"]),
        // Typed async proxies of the services for applications, built on the contract.
        .target(name: "EarshotClient", dependencies: ["ContractCore", "EarshotContract", "EarshotDBus", "EarshotSync"]),
        // A voice memo in twenty lines, on EarshotClient.
        .executableTarget(name: "voice-memo", dependencies: ["ContractCore", "EarshotClient"], path: "Examples/VoiceMemo"),
        // Writes docs/api from the contract.
        .executableTarget(name: "earshot-api-docs", dependencies: ["EarshotContract"]),

        // The D-Bus binding: connections, values, client and server sides, a{sv} options.
        .target(name: "EarshotDBus", dependencies: [
            "CDBus", "CGlibcExtras", "DBusDeclarations", "EarshotSync",
            .product(name: "Logging", package: "swift-log"),
        ]),

        // Process scaffolding shared by every service executable.
        .target(name: "EarshotService", dependencies: [
            "CGlibcExtras", "ContractCore", "EarshotClient", "EarshotContract", "EarshotDBus", "EarshotSync",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        ]),

        // A small service that exercises every part of the binding; used by the tests and
        // as the peer of the D-Bus benchmark.
        .target(name: "EarshotEcho", dependencies: ["ContractCore", "EarshotDBus"]),
        .executableTarget(name: "earshot-echo", dependencies: [
            "EarshotEcho", "EarshotService",
        ]),

        // The benchmark and its C references: a libdbus client of the echo service, and a
        // libasound + libdbus capture loop doing a capture service's least work per chunk.
        .target(name: "CEchoClient", dependencies: ["CDBus"]),
        .target(name: "CCaptureLoop", dependencies: ["CDBus", "CALSA"]),
        // The capture loop as a C program of its own, as arecord is: no Swift runtime, and
        // no threads but the loop's, in the process whose CPU time the benchmark compares.
        .executableTarget(name: "earshot-capture-loop", dependencies: ["CCaptureLoop"],
                          linkerSettings: cOnlyLinking + [.unsafeFlags(["-use-ld=lld"])]),
        .executableTarget(name: "earshot-bench", dependencies: [
            "CaptureCore", "ContractCore", "EarshotClient", "EarshotContract", "EarshotDBus", "EarshotEcho", "EarshotService", "EarshotTestHarness", "CEchoClient",
            "EarshotMedia", "PieceStore", "PiecesCore", "EarshotPipeWire", "EarshotSpeechProcessing", "EarshotCabinSound", "CSpeexDSP", "CSpaEchoCancel",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ]),

        // Private bus daemons and service processes for tests and benchmarks.
        .target(name: "EarshotTestHarness", dependencies: ["ContractCore", "EarshotClient", "EarshotContract", "EarshotDBus", "EarshotService", "EarshotSync"]),
        // A car's sound for the speech-processing tests and benchmark (speech, echo, noise);
        // optimised in every build: its echo is made by convolution.
        .target(name: "EarshotCabinSound", dependencies: ["ContractCore", "EarshotContract", "EarshotVoice", "EarshotTestHarness"], swiftSettings: [.unsafeFlags(["-O"])]),
        // Expectations shared by the test targets (Swift Testing).
        .target(name: "EarshotTestSupport", dependencies: ["EarshotClient", "EarshotDBus", "EarshotSync"]),

        .testTarget(name: "EarshotALSATests", dependencies: ["EarshotALSA", "EarshotSync"]),
        // The process's own task threads (the services' default executor).
        .testTarget(name: "EarshotSyncTests", dependencies: ["EarshotSync"]),
        .testTarget(name: "AlertsCoreTests", dependencies: ["AlertsCore", "ContractCore"]),
        .testTarget(name: "AlertsServiceTests", dependencies: [
            "ContractCore", "EarshotContract", "EarshotDBus", "EarshotClient", "EarshotTestHarness", "EarshotTestSupport"]),
        // The alert voice and ALSA playback, on real libespeak-ng, libsndfile and file PCMs.
        .testTarget(name: "EarshotVoiceTests", dependencies: [
            "ContractCore", "EarshotVoice", "CSndFile", "EarshotALSA", "EarshotSync", "EarshotTestHarness"]),
        .testTarget(name: "EarshotMediaTests", dependencies: ["EarshotMedia", "EarshotSync"]),
        .testTarget(name: "EarshotSpeechProcessingTests", dependencies: [
            "EarshotSpeechProcessing", "EarshotSync", "EarshotCabinSound", "EarshotTestHarness"]),
        .testTarget(name: "PiecesCoreTests", dependencies: ["PiecesCore", "ContractCore"]),
        .testTarget(name: "EarshotClientTests", dependencies: [
            "ContractCore", "EarshotClient", "EarshotContract", "EarshotDBus", "EarshotTestHarness",
        ]),
        .testTarget(name: "EarshotContractTests", dependencies: [
            "AlertsCore", "ContractCore", "CaptureCore", "EarshotContract", "EarshotDBus", "EarshotTestHarness", "OrchestratorCore", "PiecesCore",
            "SessionCore",
        ]),
        .testTarget(name: "PiecesServiceTests", dependencies: [
            "ContractCore", "EarshotClient", "EarshotContract", "EarshotDBus", "EarshotMedia", "EarshotSync", "EarshotTestHarness", "EarshotTestSupport", "PostgresPieceStore",
            .product(name: "Logging", package: "swift-log"), .product(name: "PostgresNIO", package: "postgres-nio"),
        ]),
        // The install script, systemd units, activation files and policy.
        .testTarget(name: "DeploymentTests", dependencies: [
            "EarshotContract", "EarshotDBus", "EarshotService", "EarshotTestHarness"]),
        // The installed system booted in a box (deploy/earshot-dev test-system runs these).
        .testTarget(name: "SystemBoxTests", dependencies: [
            "EarshotContract", "EarshotTestHarness"]),
        .testTarget(name: "ClientTests", dependencies: [
            "EarshotContract", "EarshotDBus", "EarshotTestHarness", "EarshotTestSupport"]),
        .testTarget(name: "OrchestratorCoreTests", dependencies: ["OrchestratorCore", "ContractCore"]),
        .testTarget(name: "OrchestratorServiceTests", dependencies: [
            "ContractCore", "EarshotContract", "EarshotDBus", "EarshotClient", "EarshotTestHarness", "EarshotTestSupport"]),
        .testTarget(name: "SessionCoreTests", dependencies: ["SessionCore", "ContractCore"]),
        .testTarget(name: "SessionServiceTests", dependencies: [
            "ContractCore", "EarshotClient", "EarshotContract", "EarshotDBus", "EarshotTestHarness", "EarshotTestSupport"],
            exclude: ["Fixtures"]),
        .testTarget(name: "CaptureCoreTests", dependencies: [
            "EarshotContract", "CaptureCore", "ContractCore", "EarshotTestHarness"]),
        .testTarget(name: "CaptureServiceTests", dependencies: [
            "CaptureCore", "ContractCore", "EarshotContract", "EarshotDBus", "EarshotClient", "EarshotTestHarness", "EarshotTestSupport",
            "EarshotCabinSound",
        ]),
        // Hardening: every service fuzzed over the bus, under load, through faults, and
        // behind the system-bus policy.
        .testTarget(name: "BusFuzzTests", dependencies: ["EarshotDBus", "EarshotTestHarness", "EarshotTestSupport"]),
        .testTarget(name: "LoadTests", dependencies: [
            "EarshotContract", "CDBus", "EarshotDBus", "EarshotSync", "EarshotTestHarness", "EarshotTestSupport"]),
        .testTarget(name: "FaultTests", dependencies: [
            "EarshotClient", "EarshotContract", "ContractCore", "EarshotDBus", "EarshotMedia", "EarshotTestHarness", "EarshotTestSupport"]),
        .testTarget(name: "PolicyTests", dependencies: [
            "EarshotClient", "EarshotContract", "ContractCore", "EarshotDBus", "EarshotTestHarness", "EarshotTestSupport", "CFileAccess"]),
        .testTarget(name: "EarshotDBusTests", dependencies: [
            "ContractCore", "EarshotDBus", "EarshotEcho", "EarshotService", "EarshotTestHarness", "EarshotTestSupport",
        ], exclude: ["Fixtures"]),
    ],
    swiftLanguageModes: [.v6]
)
