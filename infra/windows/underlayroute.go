package windows

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/winconform/winconform/infra/windows/nodeconfig"
)

// UnderlayRoute is a route the join gives a machine joined through the
// routed underlay (infra/underlay's plan): to Destination, the kind
// network, through NextHop, the kind host's address the machine reaches.
type UnderlayRoute struct {
	Destination string
	NextHop     string
}

// underlayRouteParams gives a machine of the routed underlay its routes to
// the kind network through the kind host; a machine on the kind network's
// bridge (same-host), or whose network is someone else's to make, has none.
func (j *joinRun) underlayRouteParams() ([]Param, string, error) {
	if len(j.underlay) == 0 {
		return nil, "the machine reaches the kind network without a route of the harness's (its underlay is same-host or none)", nil
	}
	var dests []string
	hop := j.underlay[0].NextHop
	for _, r := range j.underlay {
		if r.NextHop != hop {
			return nil, "", fmt.Errorf("machine %s: its underlay routes go through two kind hosts, %s and %s", j.m.Name, hop, r.NextHop)
		}
		dests = append(dests, r.Destination)
	}
	return []Param{{"Destinations", strings.Join(dests, "|")}, {"NextHop", hop}, {"Metric", strconv.Itoa(nodeconfig.UnderlayRouteMetric)}}, "", nil
}

// underlayUnrouteParams removes the routes the join gave the machine (every
// route of the harness's metric); Destinations are those the reset knows
// of. A machine the underlay gives no route to (same-host, none) has none
// of the harness's to remove.
func (j *joinRun) underlayUnrouteParams() ([]Param, string, error) {
	if len(j.underlay) == 0 {
		return nil, "the underlay gives the machine no route (same-host or none)", nil
	}
	var dests []string
	for _, r := range j.underlay {
		dests = append(dests, r.Destination)
	}
	return []Param{{"Destinations", strings.Join(dests, "|")}, {"Metric", strconv.Itoa(nodeconfig.UnderlayRouteMetric)}}, "", nil
}
