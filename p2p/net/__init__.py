"""The Trio shell: the mesh of authenticated links, zeroconf discovery, record fetches, the loopback guard and the node."""
