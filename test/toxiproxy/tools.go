//go:build tools

// Package tools pins Toxiproxy's server command, which scripts/toxiproxy/build.sh builds.
package tools

import _ "github.com/Shopify/toxiproxy/v2/cmd/server"
