import ContractCore
extension EarshotContract {
    /// What every service does the same way.
    public static let conventions = [
        "**Names.** A service's well-known name, its manager object's path and its manager interface share one versioned "
            + "name (`org.earshot.Capture1` at `/org/earshot/Capture1`). Requests are objects below the manager path "
            + "(`/org/earshot/Capture1/PassThru/7`). Members are CamelCase.",
        "**Buses.** Every service uses the session bus (`DBUS_SESSION_BUS_ADDRESS`), the system bus with `--system`, or "
            + "any bus with `--address ADDRESS`. `--introspect` prints its interfaces' XML and exits without a bus.",
        "**Requests are `a{sv}`** so that they can grow. An unknown key, or a value of the wrong D-Bus type, is refused "
            + "with `org.freedesktop.DBus.Error.InvalidArgs` whose message names the key, the type given and the type wanted. "
            + "An integer key takes any integer type (`y n q i u x t`) whose value fits; a floating key takes `d` or an integer.",
        "**Errors** are D-Bus error replies, never a status in a normal reply. Earshot's names start with "
            + "`org.earshot.Error.`. Every message names the field and the rule it broke, e.g. "
            + "`MaxDuration: 0 is outside 1..1000000 ms`. A method replies only with the errors its page lists, or "
            + "`org.freedesktop.DBus.Error.Failed` when the service itself fails (it logs why).",
        "**Long operations** reply at once with an object path; their progress and end are signals and properties of "
            + "that object. No method blocks longer than checking and queueing takes.",
        "**Privacy.** Microphone audio goes only in signals unicast to the request's owner. Completions and state changes "
            + "others may watch are broadcast, and visible as `PropertiesChanged`.",
        "**Ownership.** The unique name that made a request owns it. Only the owner (or, on the system bus, uid 0 and the "
            + "service's own user) may end or cancel it. When the owner leaves the bus, what it owned is ended and released, "
            + "unless the request asked `OutliveOwner`.",
        "**Finished objects linger** for 60 s after they finish, so that a script can read `ResultCode`, then leave the bus.",
        "**Properties** use `org.freedesktop.DBus.Properties`; `PropertiesChanged` is emitted when, and only when, a value "
            + "changes (each page says how). `Introspectable` and `Peer` are served too.",
        "**Bulk data** travels as file descriptors (`h`). Every method that takes or returns one has a sibling that takes "
            + "a path (`…Path` keys, `Export…` methods), for `busctl` before systemd 257. Paths are used with the caller's "
            + "permissions: on the system bus a path the caller's uid could not open is refused.",
        "**Units** are in the names where they could be confused (`…Ms`, `…Microseconds`, `…Hz`). Times in signals are "
            + "`CLOCK_MONOTONIC` microseconds (`MonotonicUs`).",
        "**Result codes** are SmartDeviceLink's names as strings: `SUCCESS`, `ABORTED`, `REJECTED`, `RETRY`, `WARNINGS`, "
            + "`INVALID_DATA`, `DISALLOWED`, `GENERIC_ERROR`, `UNSUPPORTED_RESOURCE`, `FILE_NOT_FOUND`, `IGNORED`.",
    ]

    /// Every error name the contract uses, with what it means.
    public static let errorMeanings: [(name: String, meaning: String)] = [
        (invalidArgs, "A wrong type, an unknown or missing key, or a key's rule where the page names this error."),
        (accessDenied, "An `OutputPath` the caller's uid may not create or write; nothing was made."),
        (limitsExceeded, "The caller (32 activations) or the service (256) holds as many as it may; the message says which."),
        (EarshotErrorName.invalidData.name, "A value of the right type that breaks the contract's rules."),
        (EarshotErrorName.rejected.name, "The request cannot be taken now (a pass-thru is active, the object has finished, …)."),
        (EarshotErrorName.disallowed.name, "The caller is not the request's owner, the piece's author, uid 0 or the service's user."),
        (EarshotErrorName.unsupportedResource.name, "The device cannot capture at that rate, width or channel count."),
        (EarshotErrorName.fileNotFound.name, "A file the request names cannot be read (or written) with the caller's permissions."),
        (EarshotErrorName.genericError.name, "The device failed in a way the other names do not cover."),
        (EarshotErrorName.pieceNotFound.name, "No piece has that id (or the caller may not see it)."),
        (EarshotErrorName.assetNotFound.name, "The piece has no such asset (cover image, attachment)."),
        (EarshotErrorName.storageUnavailable.name, "The shared catalogue's database cannot be reached; nothing was changed."),
        (EarshotErrorName.noSpace.name, "The store's file system is full; nothing was kept (or, for Delete, removed)."),
        (EarshotErrorName.damagedObject.name, "The shared catalogue's copy of an asset does not match its hash; nothing was delivered."),
        (EarshotErrorName.titleTooShort.name, "A piece's title is empty."),
        (EarshotErrorName.titleTooLong.name, "A piece's title has more than 50 Unicode scalars."),
        (EarshotErrorName.pieceTooShort.name, "A piece's length is 0."),
        (EarshotErrorName.pieceTooLong.name, "A piece is longer than 20 minutes, or its length disagrees with the mix stem's."),
        (EarshotErrorName.tempoTooLow.name, "A tempo below 1 BPM."),
        (EarshotErrorName.tempoTooHigh.name, "A tempo above 999.999 BPM."),
        (EarshotErrorName.invalidLoopMarkers.name, "Loop markers not both given, or not 0 ≤ start < end ≤ length."),
        (EarshotErrorName.invalidTimeSignature.name, "A time signature not both given, or outside 1..16 over 2, 4, 8 or 16."),
        (EarshotErrorName.invalidTonality.name, "A tonality, scale or root that does not fit together."),
        (EarshotErrorName.basedOnNotFound.name, "A piece it is based on does not exist."),
        (EarshotErrorName.invalidAudio.name, "An audio asset that does not decode as WAV, Ogg Vorbis or FLAC."),
        (EarshotErrorName.invalidCoverImage.name, "A cover image that is not a 640×640 PNG or JPEG."),
        (EarshotErrorName.attachmentTooLarge.name, "An attachment over 30 MiB."),
        (EarshotErrorName.invalidCategory.name, "An unknown session category."),
        (EarshotErrorName.invalidMode.name, "An unknown session mode."),
        (EarshotErrorName.invalidOption.name, "An unknown category option."),
        (EarshotErrorName.incompatibleOption.name, "An option or mode the category does not allow (e.g. defaultToSpeaker outside playAndRecord)."),
        (EarshotErrorName.invalidOrientation.name, "An unknown input orientation."),
        (EarshotErrorName.invalidPolarPattern.name, "An unknown polar pattern."),
        (EarshotErrorName.polarPatternNotSupported.name, "A polar pattern the input does not offer."),
        (EarshotErrorName.invalidInputType.name, "A preferred input that is not a capture device."),
        (EarshotErrorName.noInputDevice.name, "No capture device for builtInMic, or the preferred one is gone."),
        (EarshotErrorName.dataSourceNotFound.name, "A data source the input does not have."),
    ]
}
