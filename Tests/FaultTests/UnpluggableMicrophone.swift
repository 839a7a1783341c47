import EarshotTestHarness
import Foundation
import Glibc

/// A capture PCM that can be pulled out, added to a stack's ALSA configuration: the
/// `earshot_unpluggable` ioplug plugin (`libEarshotUnpluggablePCM.so` of Sources/Plugins,
/// built beside the executables) serving `infile` while the presence file exists. `unplug()` removes the file:
/// the open PCM turns DISCONNECTED and its reads fail with -ENODEV, as with a USB
/// microphone pulled out; new opens fail with -ENODEV.
struct UnpluggableMicrophone {
    let name: String
    let presence: URL

    /// Defines PCM `name` in `stack`'s ALSA configuration, reading `infile`. Call before
    /// starting the services that should see it.
    init(_ name: String, infile: URL, in stack: ServiceStack) throws {
        let library = try ServiceProcess.plugin("libEarshotUnpluggablePCM.so")
        self.name = name
        presence = stack.file(name + ".present")
        guard FileManager.default.createFile(atPath: presence.path, contents: nil) else {
            throw HarnessError("cannot create \(presence.path)")
        }
        let definition = """

            pcm_type.earshot_unpluggable { lib "\(library.path)" }
            pcm.\(name) { type earshot_unpluggable infile "\(infile.path)" presence "\(presence.path)" }

            """
        let config = try FileHandle(forWritingTo: stack.file("asound.conf"))
        defer { try? config.close() }
        try config.seekToEnd()
        try config.write(contentsOf: Data(definition.utf8))
    }

    /// Pulls the device out.
    func unplug() {
        unlink(presence.path)
    }

    /// Plugs it back in.
    func plugIn() {
        _ = FileManager.default.createFile(atPath: presence.path, contents: nil)
    }
}
