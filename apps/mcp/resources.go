package mcp

// A server's resources, for its own spoke: a server that declares the
// resources capability gets two read-only functions more, read_resource
// (resources/read of one URI: a resource link a tool returned, or one
// list_resources named) and list_resources (resources/list and
// resources/templates/list). Each is called as its tools are: on the
// spoke's own instance, through the same client session, to the same
// process in the same sandbox — never another app's server. What they
// return is the app's text, as a tool's is ({"content": "..."}, bounded
// by MaxOutput), seen by that spoke alone.

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Bounds of list_resources.
const (
	maxListed      = 1000 // resources and templates named
	maxListedPages = 100  // pages asked for, of each list
)

// resourceFunction is a function every server with resources gets.
type resourceFunction struct {
	name, desc string
	params     json.RawMessage
	kind       kind
}

// resourceFunctions are the functions of a server's resources. Their
// words are bulkhead's.
var resourceFunctions = []resourceFunction{
	{name: "read_resource", kind: readResource,
		desc:   "Read a resource of this app's MCP server by its URI: one a resource link in a tool's result names, or one list_resources lists (a template's URI filled in). Returns its text; a binary content is described, not returned.",
		params: json.RawMessage(`{"type":"object","properties":{"uri":{"type":"string","description":"the resource's URI"}},"required":["uri"]}`)},
	{name: "list_resources", kind: listResources,
		desc:   "List the resources (URI, name, type) and resource templates of this app's MCP server; read_resource reads one.",
		params: json.RawMessage(`{"type":"object","properties":{}}`)},
}

// resources calls what a resource function calls: resources/read of
// uri, or the lists of resources and templates; its text.
func (c *conn) resources(ctx context.Context, k kind, uri string) (string, error) {
	if k == listResources {
		return c.listResources(ctx)
	}
	res, err := c.session.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri})
	if err != nil {
		return "", err
	}
	return resourceText(res), nil
}

// listResources is what list_resources returns: a line per resource,
// then a line per template, at most maxListed in all.
func (c *conn) listResources(ctx context.Context) (string, error) {
	var b strings.Builder
	n, more := 0, false
	cursor := ""
	for range maxListedPages {
		page, err := c.session.ListResources(ctx, &sdk.ListResourcesParams{Cursor: cursor})
		if err != nil {
			return "", err
		}
		for _, r := range page.Resources {
			if r == nil {
				continue
			}
			if n == maxListed {
				more = true
				break
			}
			n++
			fmt.Fprintf(&b, "%s\t%s", r.URI, r.Name)
			if r.MIMEType != "" {
				fmt.Fprintf(&b, "\t%s", r.MIMEType)
			}
			if r.Description != "" {
				fmt.Fprintf(&b, "\t%s", clip(oneLine(r.Description), 200))
			}
			b.WriteByte('\n')
		}
		if cursor = page.NextCursor; cursor == "" || more {
			break
		}
	}
	head := fmt.Sprintf("%d resources:\n", n)
	if n == 0 {
		head = "no resources listed\n"
	}
	// Templates, where the server has them: a server without any may
	// not know the method.
	t, tn := "", 0
	cursor = ""
	for range maxListedPages {
		page, err := c.session.ListResourceTemplates(ctx, &sdk.ListResourceTemplatesParams{Cursor: cursor})
		if err != nil {
			break
		}
		for _, r := range page.ResourceTemplates {
			if r == nil {
				continue
			}
			if n == maxListed {
				more = true
				break
			}
			n++
			tn++
			t += fmt.Sprintf("%s\t%s", r.URITemplate, r.Name)
			if r.MIMEType != "" {
				t += "\t" + r.MIMEType
			}
			if r.Description != "" {
				t += "\t" + clip(oneLine(r.Description), 200)
			}
			t += "\n"
		}
		if cursor = page.NextCursor; cursor == "" || more {
			break
		}
	}
	out := head + b.String()
	if tn > 0 {
		out += fmt.Sprintf("%d resource templates (fill in the {…} to read one):\n", tn) + t
	}
	if more {
		out += fmt.Sprintf("(only the first %d are listed)\n", maxListed)
	}
	return strings.TrimRight(out, "\n"), nil
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// resourceText renders what resources/read answered: each content's
// text; a binary one becomes a short note of its URI, type and size.
func resourceText(r *sdk.ReadResourceResult) string {
	var parts []string
	for _, c := range r.Contents {
		switch {
		case c == nil:
		case c.Blob != nil:
			parts = append(parts, fmt.Sprintf("[resource %s %s, %d bytes]", c.URI, c.MIMEType, len(c.Blob)))
		default:
			parts = append(parts, c.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// textResult is text as a function's result, {"content": "..."}; over
// max bytes, an error.
func textResult(text string, max int) (json.RawMessage, error) {
	out, err := json.Marshal(map[string]string{"content": text})
	if err != nil {
		return nil, err
	}
	if len(out) > max {
		return nil, fmt.Errorf("its output is too large (%d bytes; the limit is %d)", len(out), max)
	}
	return out, nil
}
