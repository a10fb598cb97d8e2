// Package fakegpu is a fake GPU fleet.
package fakegpu
