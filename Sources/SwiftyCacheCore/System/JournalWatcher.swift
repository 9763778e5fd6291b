import Dispatch

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Musl)
@preconcurrency import Musl
#endif

/// Calls `onChange` when the journal in a cache's directory may have changed (appended to,
/// replaced), for a read-only cache that delivers a writer's changes. No busy poll: inotify on
/// Linux, a dispatch source (kqueue) on Apple platforms; where neither can be set up, a check
/// every 50 ms. `onChange` runs on the watcher's own thread, never two at once.
package final class JournalWatcher: Sendable {
    /// How often the timed fallback checks.
    static let fallbackIntervalMilliseconds: Int32 = 50

    private let stopper: Stopper

    /// How the watcher learns of changes.
    package enum Mechanism: Sendable {
        /// The platform's notifications, or the timed check where they cannot be set up.
        case automatic
        /// The timed check alone (for the tests of it).
        case timed
    }

    /// Starts watching `directory` (which holds `journal`).
    package init(
        directory: String, mechanism: Mechanism = .automatic, onChange: @escaping @Sendable () -> Void
    ) {
        stopper = Stopper()
        let stopper = self.stopper
        DispatchQueue(label: "SwiftyCache.JournalWatcher").async {
            if mechanism == .automatic,
                JournalWatcher.watchWithNotifications(directory: directory, stopper: stopper, onChange: onChange)
            {
                return
            }
            // The timed fallback.
            while JournalWatcher.wait(for: -1, stopper: stopper, timeout: JournalWatcher.fallbackIntervalMilliseconds) {
                onChange()
            }
        }
    }

    /// Stops watching; `onChange` is not called after this returns, unless it is running.
    package func stop() { stopper.stop() }

    deinit { stopper.stop() }
}

extension JournalWatcher {
    /// The pipe that wakes the watching thread to stop it, and whether it was stopped.
    final class Stopper: Sendable {
        let readEnd: Int32
        let writeEnd: Int32
        private let lock = LockedState(false)

        init() {
            var ends: [Int32] = [-1, -1]
            if pipe(&ends) != 0 { ends = [-1, -1] }
            readEnd = ends[0]
            writeEnd = ends[1]
        }

        var isStopped: Bool { lock.withLock { $0 } }

        func stop() {
            let first = lock.withLock { stopped -> Bool in
                defer { stopped = true }
                return !stopped
            }
            guard first, writeEnd >= 0 else { return }
            var byte: UInt8 = 1
            _ = write(writeEnd, &byte, 1)
        }

        deinit {
            if readEnd >= 0 { close(readEnd) }
            if writeEnd >= 0 { close(writeEnd) }
        }
    }

    /// Waits on the stop pipe and `fd` (or only on the pipe, with a timeout, when `fd` is -1);
    /// returns `false` when stopped.
    static func wait(for fd: Int32, stopper: Stopper, timeout: Int32) -> Bool {
        var fds = [pollfd(fd: stopper.readEnd, events: Int16(POLLIN), revents: 0)]
        if fd >= 0 { fds.append(pollfd(fd: fd, events: Int16(POLLIN), revents: 0)) }
        while true {
            let result = poll(&fds, nfds_t(fds.count), timeout)
            if result < 0, errno == EINTR { continue }
            return !stopper.isStopped && fds[0].revents == 0
        }
    }

    /// Watches with the platform's notifications until stopped; `false` if they cannot be set
    /// up here.
    static func watchWithNotifications(directory: String, stopper: Stopper, onChange: @Sendable () -> Void) -> Bool {
        #if os(Linux) || os(Android)
        let fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        let watched =
            fd >= 0
            && inotify_add_watch(
                fd, directory, UInt32(IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | IN_DELETE)) >= 0
        if watched {
            defer { close(fd) }
            var buffer = [UInt8](repeating: 0, count: 64 << 10)
            // What changed between the subscription and the watch being set up.
            onChange()
            while wait(for: fd, stopper: stopper, timeout: -1) {
                // Every event pending is read; one call covers them all.
                while buffer.withUnsafeMutableBytes({ read(fd, $0.baseAddress, $0.count) }) > 0 {}
                onChange()
            }
            return true
        }
        if fd >= 0 { close(fd) }
        return false
        #elseif canImport(Darwin)
        return watchWithDispatchSources(directory: directory, stopper: stopper, onChange: onChange)
        #else
        return false
        #endif
    }

    #if canImport(Darwin)
    /// kqueue through dispatch sources: the directory (a journal created or renamed into place)
    /// and the journal itself (appended to, replaced); reopened when it is replaced.
    static func watchWithDispatchSources(
        directory: String, stopper: Stopper, onChange: @Sendable () -> Void
    ) -> Bool {
        let directoryFD = open(directory, O_EVTONLY)
        guard directoryFD >= 0 else { return false }
        defer { close(directoryFD) }
        let signal = DispatchSemaphore(value: 0)
        let queue = DispatchQueue(label: "SwiftyCache.JournalWatcher.events")
        let directorySource = DispatchSource.makeFileSystemObjectSource(
            fileDescriptor: directoryFD, eventMask: [.write, .rename, .delete], queue: queue)
        directorySource.setEventHandler { signal.signal() }
        directorySource.resume()
        defer { directorySource.cancel() }
        // What changed between the subscription and the watch being set up.
        onChange()
        while !stopper.isStopped {
            let journalFD = open(directory + "/journal", O_EVTONLY)
            var journalSource: (any DispatchSourceFileSystemObject)?
            if journalFD >= 0 {
                let source = DispatchSource.makeFileSystemObjectSource(
                    fileDescriptor: journalFD, eventMask: [.extend, .write, .rename, .delete], queue: queue)
                source.setEventHandler { signal.signal() }
                source.setCancelHandler { close(journalFD) }
                source.resume()
                journalSource = source
            }
            // Woken by an event, or every second to notice a stop.
            while !stopper.isStopped, signal.wait(timeout: .now() + .seconds(1)) == .timedOut {}
            journalSource?.cancel()
            guard !stopper.isStopped else { break }
            onChange()
        }
        return true
    }
    #endif
}
