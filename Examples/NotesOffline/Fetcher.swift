import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What fetching one URL gave.
enum FetchOutcome: Sendable {
    /// A new or changed page.
    case fetched(Page)
    /// The server answered 304 (or the file is unchanged): the cached copy stands.
    case notModified
    /// Not a page to keep (a PDF, an image, a redirect to another host): the reason, for a note.
    case skipped(String)
}

/// A fetch that failed, with a message fit for one line on stderr.
struct FetchError: Error, CustomStringConvertible {
    var description: String
}

/// Fetches pages over http(s) with conditional requests, and file URLs from disk.
struct Fetcher: Sendable {
    let session: URLSession
    let timeout: TimeInterval
    private let redirects: RedirectPolicy

    /// - Parameters:
    ///   - timeout: Seconds one request may take.
    ///   - spanHosts: Whether a redirect to another host is followed.
    init(timeout: TimeInterval = 30, spanHosts: Bool = false) {
        let configuration = URLSessionConfiguration.ephemeral
        // Our cache is the cache: no URLCache underneath that would hide 304s from us.
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.timeoutIntervalForRequest = timeout
        configuration.timeoutIntervalForResource = timeout
        self.timeout = timeout
        redirects = RedirectPolicy(spanHosts: spanHosts)
        session = URLSession(configuration: configuration, delegate: redirects, delegateQueue: nil)
    }

    /// Fetches `url`; with a `cached` copy, asks the server whether it changed.
    func fetch(_ url: URL, cached: Page?, now: Date) async throws -> FetchOutcome {
        if url.isFileURL { return try fetchFile(url, cached: cached, now: now) }
        if let skipped = Self.binaryExtension(of: url) { return .skipped(skipped) }
        var request = URLRequest(url: url, timeoutInterval: timeout)
        request.setValue("text/html, text/*;q=0.9, */*;q=0.1", forHTTPHeaderField: "Accept")
        if let etag = cached?.validators.etag { request.setValue(etag, forHTTPHeaderField: "If-None-Match") }
        if let lastModified = cached?.validators.lastModified {
            request.setValue(lastModified, forHTTPHeaderField: "If-Modified-Since")
        }
        let data: Data
        let response: URLResponse
        do {
            (data, response) = try await session.data(for: request)
        } catch let error as URLError where error.code == .timedOut {
            throw FetchError(description: "\(url.absoluteString): timed out after \(Self.seconds(timeout)) s")
        } catch let error as URLError where error.code == .cancelled {
            throw CancellationError()
        } catch let error as URLError {
            throw FetchError(
                description: "cannot reach \(url.host ?? url.absoluteString): \(error.localizedDescription)")
        }
        try Task.checkCancellation()
        guard let http = response as? HTTPURLResponse else {
            throw FetchError(description: "\(url.absoluteString): not an HTTP response")
        }
        if http.statusCode == 304 {
            guard cached != nil else {
                throw FetchError(description: "\(url.absoluteString): unexpected 304 with no cached copy")
            }
            return .notModified
        }
        if (300..<400).contains(http.statusCode), let location = http.value(forHTTPHeaderField: "Location") {
            let target = URL(string: location, relativeTo: url)?.host ?? location
            return .skipped("redirects to another host (\(target)); --span-hosts follows it")
        }
        guard (200..<300).contains(http.statusCode) else {
            let reason = HTTPURLResponse.localizedString(forStatusCode: http.statusCode).capitalized
            throw FetchError(description: "\(url.absoluteString): HTTP \(http.statusCode) \(reason)")
        }
        let contentType = http.value(forHTTPHeaderField: "Content-Type") ?? "text/html"
        guard Self.isText(contentType) else { return .skipped("not a text page (\(contentType))") }
        let body = Charset.decode(data, contentType: contentType)
        let isHTML = contentType.lowercased().contains("html")
        return .fetched(
            Page(
                url: http.url.flatMap(NoteURL.normalize) ?? url,
                title: (isHTML ? HTMLText.title(of: body) : nil) ?? url.lastPathComponent, body: body,
                contentType: contentType,
                validators: Validators(
                    etag: http.value(forHTTPHeaderField: "ETag"),
                    lastModified: http.value(forHTTPHeaderField: "Last-Modified")),
                fetchedAt: now))
    }

    private func fetchFile(_ url: URL, cached: Page?, now: Date) throws -> FetchOutcome {
        let path = url.path(percentEncoded: false)
        let attributes: [FileAttributeKey: Any]
        do {
            attributes = try FileManager.default.attributesOfItem(atPath: path)
        } catch {
            throw FetchError(description: "\(path): no such file")
        }
        // The modification date plays the part of Last-Modified.
        let modified = (attributes[.modificationDate] as? Date).map { String($0.timeIntervalSince1970) }
        if let cached, let modified, cached.validators.lastModified == modified { return .notModified }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw FetchError(description: "\(path): cannot be read")
        }
        let type =
            ["html": "text/html", "htm": "text/html", "md": "text/markdown", "txt": "text/plain"][
                url.pathExtension.lowercased()] ?? "text/plain"
        guard !data.contains(0) else { return .skipped("not a text file") }
        let body = Charset.decode(data, contentType: type)
        return .fetched(
            Page(
                url: url, title: (type == "text/html" ? HTMLText.title(of: body) : nil) ?? url.lastPathComponent,
                body: body, contentType: type, validators: Validators(lastModified: modified), fetchedAt: now))
    }

    static func isText(_ contentType: String) -> Bool {
        let type =
            contentType.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
        return type.hasPrefix("text/")
            || ["application/xhtml+xml", "application/xml", "application/json"].contains(type)
    }

    /// Links to files that are plainly not pages are skipped without a request.
    static func binaryExtension(of url: URL) -> String? {
        let binary: Set<String> = [
            "pdf", "png", "jpg", "jpeg", "gif", "webp", "svg", "ico", "zip", "gz", "tar", "mp3", "mp4", "mov",
            "woff", "woff2", "ttf", "exe", "dmg", "doc", "docx", "xls", "xlsx", "ppt", "pptx",
        ]
        let ext = url.pathExtension.lowercased()
        return binary.contains(ext) ? "not a page (.\(ext))" : nil
    }

    static func seconds(_ value: TimeInterval) -> String {
        value == value.rounded() ? String(Int(value)) : String(format: "%.1f", value)
    }
}

/// Follows redirects on the same host only, unless told to span hosts.
final class RedirectPolicy: NSObject, URLSessionTaskDelegate, Sendable {
    let spanHosts: Bool

    init(spanHosts: Bool) {
        self.spanHosts = spanHosts
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        let from = response.url?.host?.lowercased()
        let to = request.url?.host?.lowercased()
        completionHandler(spanHosts || from == to ? request : nil)
    }
}
