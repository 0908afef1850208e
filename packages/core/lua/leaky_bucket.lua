-- leakyBucket: the token bucket's arithmetic with capacity queue + 1; an admitted request
-- starts when the arrival time says, so it reports that wait as its delay.
POLICIES.leakyBucket = function(key, capacity, per_unit, per_ms, now, cost)
  return bucket(true, key, capacity, per_unit, per_ms, now, cost)
end
