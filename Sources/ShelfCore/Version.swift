/// shelfd's release, as remote services see it in the User-Agent (OpenLibrary asks every client to name itself).
package enum ShelfdVersion {
    package static let current = "0.1.0"
}
