--[[
topoplace — cli_filter/lua: rank-to-node placement from the client side.

An alternative to the SPANK plugin's own placement in srun, for sites that
prefer to do it in cli_filter.  It runs inside srun (slurm_cli_pre_submit,
before srun checks its options), asks the `topoplace` command for the mapping
of this srun's tasks onto the allocation and sets the node list with
arbitrary distribution, exactly like `srun -m arbitrary -w n3,n1,...`.

Install (Slurm 22.05):
  slurm.conf:   CliFilterPlugins=cli_filter/lua
  this file as: cli_filter.lua in the directory of slurm.conf
The SPANK plugin must still be loaded (plugstack.conf): it provides the
--topo-* options, whose values reach this script in options.spank.  When the
plugin has already placed the step (SLURM_HOSTFILE is set), this script does
nothing; it acts where the plugin did not (for instance with plugstack
policy=none, or an older plugin).  Works only inside an allocation
(salloc/sbatch): a stand-alone srun has no nodes yet.

Fail open: any problem prints one "topoplace: error: ..." line and leaves the
options alone.  Options set by the user (-w, -m, a node count) win.
--]]

local TOPOPLACE = "/usr/local/bin/topoplace"
local CONF = "/etc/slurm/topoplace.conf"

local function q(s)
	return "'" .. (tostring(s):gsub("'", "'\\''")) .. "'"
end

local function err(msg)
	io.stderr:write("topoplace: error: " .. msg .. "; Slurm's placement is kept\n")
end

local function unset(v)
	return v == nil or v == "" or v == "unknown" or v == "(null)"
end

-- A --topo-* option: srun's own, else from sbatch/salloc through the env.
local function topo_opt(options, name)
	local sp = options.spank
	local v = nil
	if type(sp) == "table" then
		local t = sp["topoplace"]
		if type(t) == "table" then v = t[name] end
		if v == nil then v = sp[name] end
	end
	if unset(v) then
		v = os.getenv("SLURM_SPANK__SLURM_SPANK_OPTION_topoplace_" .. name:gsub("-", "_"))
	end
	if unset(v) then return nil end
	return v
end

-- Sum of a SLURM_TASKS_PER_NODE spec: "2(x3),1" -> 7
local function tpn_sum(spec)
	if spec == nil then return nil end
	local sum = 0
	for part in spec:gmatch("[^,]+") do
		local v, rep = part:match("^(%d+)%(x(%d+)%)$")
		if v == nil then v, rep = part:match("^(%d+)$"), 1 end
		if v == nil then return nil end
		sum = sum + tonumber(v) * tonumber(rep)
	end
	return sum
end

function slurm_cli_setup_defaults(options, early_pass)
	return slurm.SUCCESS
end

function slurm_cli_pre_submit(options, offset)
	if options.type ~= "srun" then return slurm.SUCCESS end
	local stencil = topo_opt(options, "topo-stencil")
	local graph = topo_opt(options, "topo-graph")
	local policy = topo_opt(options, "topo-policy")
	if stencil == nil and graph == nil then return slurm.SUCCESS end
	if policy == "none" then return slurm.SUCCESS end
	local nodes = os.getenv("SLURM_JOB_NODELIST")
	if nodes == nil then return slurm.SUCCESS end            -- no allocation yet
	if os.getenv("SLURM_HOSTFILE") ~= nil then return slurm.SUCCESS end  -- placed
	if not unset(options.nodelist) or not unset(options.distribution) then
		return slurm.SUCCESS                                     -- the user's choice
	end
	if stencil ~= nil and graph ~= nil then
		err("give --topo-stencil or --topo-graph, not both")
		return slurm.SUCCESS
	end

	local spec = os.getenv("SLURM_TASKS_PER_NODE")
	local n = tonumber(options.ntasks)
	if n == nil or n <= 0 or options.ntasks_set == false then
		n = tonumber(os.getenv("SLURM_NTASKS")) or tpn_sum(spec)
	end
	if n == nil or n <= 0 then
		err("cannot tell the number of tasks")
		return slurm.SUCCESS
	end

	local cmd = TOPOPLACE .. " map --config " .. q(CONF) .. " --nodes " .. q(nodes)
	if spec ~= nil and tpn_sum(spec) == n then
		cmd = cmd .. " --tasks-per-node " .. q(spec)
	else
		cmd = cmd .. " --ntasks " .. q(n)
	end
	if stencil ~= nil then
		cmd = cmd .. " --stencil " .. q(stencil)
	else
		cmd = cmd .. " --graph " .. q(graph)
	end
	if policy ~= nil and policy ~= "auto" then
		cmd = cmd .. " --policy " .. q(policy)
	end
	cmd = cmd .. " --format hostfile 2>&1"

	local p = io.popen(cmd)
	if p == nil then
		err("cannot run " .. TOPOPLACE)
		return slurm.SUCCESS
	end
	local list, out = {}, {}
	for line in p:lines() do
		out[#out + 1] = line
		if line:match("^[%w%.%-_]+$") then list[#list + 1] = line end
	end
	local ok = p:close()
	if not ok or #list ~= n then
		local why = out[#out] or ("no output from " .. TOPOPLACE)
		err(why:gsub("^topoplace: ", ""))
		return slurm.SUCCESS
	end
	options.nodelist = table.concat(list, ",")
	options.distribution = "arbitrary"
	return slurm.SUCCESS
end

function slurm_cli_post_submit(offset, job_id, step_id)
	return slurm.SUCCESS
end
