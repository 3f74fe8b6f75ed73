import Foundation
import Logging
import ShelfApp
import ShelfConfig
import ShelfCore

/// Everything the pages and the API reach: the configuration, the application's desks (the one code path of
/// every decision, shared with the command line), and the templates.
package struct WebSite: Sendable {
    package let config: Configuration
    package let secrets: Secrets
    package let desks: Desks
    package let templates: Templates
    package let logger: Logger
    /// Wrong tokens counted per client, for this server's door and login.
    let throttle: TokenThrottle

    package init(config: Configuration, secrets: Secrets, desks: Desks, logger: Logger) throws {
        self.config = config
        self.secrets = secrets
        self.desks = desks
        self.templates = try Templates()
        self.logger = logger
        self.throttle = TokenThrottle(time: desks.time)
    }

    /// What `shelfd status --json` says, built at most once per change of the database and second.
    package func status() throws -> StatusDocument { try desks.status() }
}
